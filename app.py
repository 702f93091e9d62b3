"""dpgames in the browser: ``streamlit run app.py``.

Presentation only: every page calls the dpgames library for every number it shows (see
dpgames_app/). A page whose library part has not landed yet is left out, not faked.
"""

from pathlib import Path

import streamlit as st

PAGES = Path(__file__).resolve().parent / "dpgames_app"

st.set_page_config(page_title="dpgames", page_icon=":material/gavel:", layout="wide")
navigation = st.navigation(
    [
        st.Page(
            PAGES / "auction.py",
            title="Digital-goods auction",
            icon=":material/sell:",
            default=True,
        ),
        st.Page(
            PAGES / "truthfulness.py",
            title="Exact truthfulness",
            icon=":material/balance:",
            url_path="truthfulness",
        ),
        st.Page(
            PAGES / "gain_curves.py",
            title="Gain against a parameter",
            icon=":material/show_chart:",
            url_path="gain_curves",
        ),
        st.Page(
            PAGES / "large_games.py",
            title="Large games",
            icon=":material/traffic:",
            url_path="large_games",
        ),
        st.Page(
            PAGES / "anonymous_games.py",
            title="General large games",
            icon=":material/groups:",
            url_path="anonymous_games",
        ),
        st.Page(
            PAGES / "privacy_budget.py",
            title="Privacy budget",
            icon=":material/account_balance_wallet:",
            url_path="privacy_budget",
        ),
        st.Page(
            PAGES / "privacy_market.py",
            title="Markets for privacy",
            icon=":material/payments:",
            url_path="privacy_market",
        ),
        st.Page(
            PAGES / "allocation.py",
            title="Private allocation",
            icon=":material/storefront:",
            url_path="allocation",
        ),
        st.Page(
            PAGES / "scenarios.py",
            title="Scenarios",
            icon=":material/description:",
            url_path="scenarios",
        ),
    ]
)
navigation.run()
