"""Large games in aggregate form: congestion and routing games, baselines, no-regret dynamics, the private mediator."""
