"""Reading scenario files: a strict, typed view of a TOML table.

Every field a scenario kind reads goes through a :class:`Table`; every error names the file, the
field and what is allowed, and a key nobody read is an error (:meth:`Table.done`), never silently
ignored.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, overload

from dpgames._files import FileError, check_folder, check_regular, confine
from dpgames.validation import ValidationError


class ScenarioError(ValidationError):
    """An invalid scenario: the message names the file, the field and what is allowed; ``field`` is
    the dotted field name (``"mechanism.epsilon"``; empty when the error is about the file as a
    whole).

    Examples
    --------
    >>> err = ScenarioError("s.toml: field 'mechanism.epsilon': must be > 0", "mechanism.epsilon")
    >>> err.field, isinstance(err, ValueError)
    ('mechanism.epsilon', True)
    """

    def __init__(self, message: str, field: str = ""):
        super().__init__("", message)
        self.field = field


_REQUIRED = object()

#: The options of :meth:`Table.choice`: plain ``str``, or a ``Literal`` type the caller expects
#: back.
_Option = TypeVar("_Option", bound=str)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _shown_key(key: str) -> str:
    """A key as shown in a message: control characters escaped (a message is one line), at most 40
    chars."""
    text = key if key.isprintable() else key.encode("unicode_escape").decode("ascii")
    return text if len(text) <= 40 else text[:37] + "..."


def _short(value: Any) -> str:
    """``repr(value)`` for a message: one line, at most 80 characters."""
    if isinstance(value, int) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _lexists(path: Path) -> bool:
    try:
        return path.is_symlink() or path.exists()
    except (OSError, ValueError):
        return False


def _describe_range(low, high, low_open, high_open) -> str:
    if low is not None and high is not None:
        return f"a number in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"a number {'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"a number {'<' if high_open else '<='} {high:g}"
    return "a number"


@dataclass(frozen=True)
class FieldPath:
    """Where a table of a scenario file sits: the file and the dotted prefix of its fields.  A spec
    keeps it (not the :class:`Table`) to name a field in an error found only when the spec is built.

    Examples
    --------
    >>> str(FieldPath("s.toml", "mechanism.").error("epsilon", "must be > 0"))
    "s.toml: field 'mechanism.epsilon': must be > 0"
    """

    source: str
    prefix: str = ""

    def where(self, key: str) -> str:
        """``"FILE: field 'PREFIX.KEY'"``, as messages start.

        Parameters
        ----------
        key : str

        Returns
        -------
        str
        """
        return f"{self.source}: field '{self.prefix}{_shown_key(key)}'"

    def error(self, key: str, message: str) -> ScenarioError:
        """A :class:`ScenarioError` about field ``key`` of this table (``field`` set to its dotted
        name).

        Parameters
        ----------
        key : str
        message : str
            What is wrong or allowed ("must be ...").

        Returns
        -------
        ScenarioError
        """
        return ScenarioError(f"{self.where(key)}: {message}", f"{self.prefix}{key}")

    @contextmanager
    def fields(self) -> Iterator[None]:
        """Attribute a :class:`~dpgames.validation.ValidationError` raised inside to the field of
        this table its ``field`` names (a library constructor called with the table's values names
        its argument, which is the field's name); a :class:`ScenarioError` passes unchanged and any
        other exception is not bad input: it propagates as the bug it is.

        Examples
        --------
        >>> from dpgames.validation import positive
        >>> with FieldPath("s.toml", "mechanism.").fields():
        ...     positive("epsilon", -1.0)
        Traceback (most recent call last):
        ...
        dpgames.scenarios.spec.ScenarioError: s.toml: field 'mechanism.epsilon': must be a finite number > 0, got -1.0
        """
        try:
            yield
        except ScenarioError:
            raise
        except ValidationError as exc:
            raise self.error(exc.field, exc.reason) from None


class Table:
    """A TOML table of a scenario file, read field by field with validation.

    Every reader names the field in its error; :meth:`done` refuses any key nobody read (a typo).

    Examples
    --------
    >>> t = Table({"epsilon": 0.5, "prices": "grid"}, "s.toml", "mechanism.")
    >>> t.number("epsilon", low=0, low_open=True), t.choice("prices", ("grid", "continuous"))
    (0.5, 'grid')
    >>> t.done()
    >>> Table({"epsilon": -1}, "s.toml", "mechanism.").number("epsilon", low=0, low_open=True)
    Traceback (most recent call last):
    ...
    dpgames.scenarios.spec.ScenarioError: s.toml: field 'mechanism.epsilon': must be a number > 0 (got -1)
    """

    def __init__(
        self,
        data: dict[str, Any],
        source: str,
        prefix: str = "",
        base_dir: Path | None = None,
        data_dirs: Sequence[Path] = (),
    ):
        if not isinstance(data, dict):
            raise ScenarioError(
                f"{source}: field '{prefix.rstrip('.') or '<top>'}': must be a table"
            )
        self.data = data
        self.source = source
        self.prefix = prefix
        self.base_dir = base_dir
        self.data_dirs = tuple(data_dirs)
        self._read: set[str] = set()

    @property
    def field_path(self) -> FieldPath:
        """This table's file and field prefix (what a spec keeps to report errors later)."""
        return FieldPath(self.source, self.prefix)

    def where(self, key: str) -> str:
        """``"FILE: field 'PREFIX.KEY'"``, as messages start.

        Parameters
        ----------
        key : str

        Returns
        -------
        str
        """
        return self.field_path.where(key)

    def error(self, key: str, message: str) -> ScenarioError:
        """A :class:`ScenarioError` about field ``key`` (see :meth:`FieldPath.error`).

        Parameters
        ----------
        key : str
        message : str

        Returns
        -------
        ScenarioError
        """
        return self.field_path.error(key, message)

    def _get(self, key: str, default: Any) -> Any:
        self._read.add(key)
        if key in self.data:
            return self.data[key]
        if default is _REQUIRED:
            # a misspelt required field: name the unread key it probably is (the unknown-key check
            # of done() would name it, but only after every required field was found)
            unread = [k for k in self.data if isinstance(k, str) and k not in self._read]
            close = difflib.get_close_matches(key, unread, n=1)
            raise self.error(
                key,
                "is required" + (f" (found {_shown_key(close[0])!r}: a typo?)" if close else ""),
            )
        return default

    def value(
        self, key: str, check: Callable[[Any], bool], allowed: str, default: Any = _REQUIRED
    ) -> Any:
        """A field that must satisfy ``check``.

        Parameters
        ----------
        key : str
        check : callable
            ``check(value) -> bool``; not called on the default.
        allowed : str
            What is allowed, in words ("a number > 0"), for the error message.
        default : object, optional
            The value when the field is absent (omitted: the field is required).

        Returns
        -------
        object

        Raises
        ------
        ScenarioError
            The field is absent and required, or fails ``check``.
        """
        present = key in self.data
        x = self._get(key, default)
        if present and not check(x):
            raise self.error(key, f"must be {allowed} (got {_short(x)})")
        return x

    @overload
    def number(
        self,
        key: str,
        default: None,
        *,
        low: float | None = None,
        high: float | None = None,
        low_open: bool = False,
        high_open: bool = False,
    ) -> float | None: ...

    @overload
    def number(
        self,
        key: str,
        default: float = ...,
        *,
        low: float | None = None,
        high: float | None = None,
        low_open: bool = False,
        high_open: bool = False,
    ) -> float: ...

    def number(
        self,
        key: str,
        default: Any = _REQUIRED,
        *,
        low: float | None = None,
        high: float | None = None,
        low_open: bool = False,
        high_open: bool = False,
    ) -> float | None:
        """A finite real number, optionally within bounds.

        Parameters
        ----------
        key : str
        default : float or None, optional
            Omitted: required.
        low, high : float, optional
            Bounds; ``low_open`` / ``high_open`` exclude them.

        Returns
        -------
        float or None
            The default when absent (typed ``float | None`` only for a ``None`` default).

        Raises
        ------
        ScenarioError
            Not a number (booleans and strings are refused), not finite, or out of bounds.
        """

        def ok(x):
            if not _is_number(x) or x != x or abs(x) == float("inf"):
                return False
            if low is not None and (x <= low if low_open else x < low):
                return False
            return not (high is not None and (x >= high if high_open else x > high))

        x = self.value(key, ok, _describe_range(low, high, low_open, high_open), default)
        # + 0.0: -0.0 is read as 0.0 (numpy tells their signs apart)
        return x if x is None else float(x) + 0.0

    @overload
    def integer(
        self, key: str, default: None, *, low: int | None = None, high: int | None = None
    ) -> int | None: ...

    @overload
    def integer(
        self, key: str, default: int = ..., *, low: int | None = None, high: int | None = None
    ) -> int: ...

    def integer(
        self, key: str, default: Any = _REQUIRED, *, low: int | None = None, high: int | None = None
    ) -> int | None:
        """A whole number (not a float, not a bool), optionally within bounds.

        Parameters
        ----------
        key : str
        default : int or None, optional
            Omitted: required.
        low, high : int, optional

        Returns
        -------
        int or None
            The default when absent (typed ``int | None`` only for a ``None`` default).

        Raises
        ------
        ScenarioError
        """

        def ok(x):
            return (
                isinstance(x, int)
                and not isinstance(x, bool)
                and (low is None or x >= low)
                and (high is None or x <= high)
            )

        allowed = (
            "a whole number"
            + (f" >= {low}" if low is not None else "")
            + (f" <= {high}" if high is not None else "")
        )
        x = self.data.get(key)
        if isinstance(x, float) and x.is_integer() and ok(int(x)):
            # 1e9 or 1000.0: TOML makes it a float
            self._read.add(key)
            raise self.error(
                key,
                f"must be {allowed} (got {_short(x)}, a float in TOML: write it without a "
                f"decimal point or exponent, e.g. {_short(int(x))})",
            )
        return self.value(key, ok, allowed, default)

    @overload
    def boolean(self, key: str, default: None) -> bool | None: ...

    @overload
    def boolean(self, key: str, default: bool = ...) -> bool: ...

    def boolean(self, key: str, default: Any = _REQUIRED) -> bool | None:
        """``true`` or ``false``.

        Parameters
        ----------
        key : str
        default : bool or None, optional

        Returns
        -------
        bool or None
            The default when absent (typed ``bool | None`` only for a ``None`` default).

        Raises
        ------
        ScenarioError
        """
        return self.value(key, lambda x: isinstance(x, bool), "true or false", default)

    @overload
    def string(self, key: str, default: None) -> str | None: ...

    @overload
    def string(self, key: str, default: str = ...) -> str: ...

    def string(self, key: str, default: Any = _REQUIRED) -> str | None:
        """A non-empty string.

        Parameters
        ----------
        key : str
        default : str or None, optional

        Returns
        -------
        str or None
            The default when absent (typed ``str | None`` only for a ``None`` default).

        Raises
        ------
        ScenarioError
        """
        return self.value(
            key, lambda x: isinstance(x, str) and x != "", "a non-empty string", default
        )

    @overload
    def choice(self, key: str, options: Sequence[_Option], default: None) -> _Option | None: ...

    @overload
    def choice(self, key: str, options: Sequence[_Option], default: _Option = ...) -> _Option: ...

    def choice(
        self, key: str, options: Sequence[_Option], default: Any = _REQUIRED
    ) -> _Option | None:
        """One of ``options``.

        Where the caller expects a ``Literal`` type (a keyword argument typed ``Noise``, or a
        variable ``noise: Noise = t.choice("noise", ("gaussian", "tree", "none"))``), a type checker
        checks every option against that type and types the value read as it: the check here is what
        makes that true.

        Parameters
        ----------
        key : str
        options : sequence of str
        default : str or None, optional
            Omitted: required.

        Returns
        -------
        str or None
            One of ``options``; the default when absent (typed ``... | None`` only for a ``None``
            default).

        Raises
        ------
        ScenarioError
            Naming every option.
        """
        allowed = "one of " + ", ".join(repr(o) for o in options)
        return self.value(key, lambda x: isinstance(x, str) and x in options, allowed, default)

    @overload
    def numbers(
        self,
        key: str,
        default: None,
        *,
        low: float | None = None,
        high: float | None = None,
        non_empty: bool = True,
    ) -> list[float] | None: ...

    @overload
    def numbers(
        self,
        key: str,
        default: list[Any] = ...,
        *,
        low: float | None = None,
        high: float | None = None,
        non_empty: bool = True,
    ) -> list[float]: ...

    def numbers(
        self,
        key: str,
        default: Any = _REQUIRED,
        *,
        low: float | None = None,
        high: float | None = None,
        non_empty: bool = True,
    ) -> list[float] | None:
        """A list of numbers, optionally within ``[low, high]``.

        Parameters
        ----------
        key : str
        default : list or None, optional
        low, high : float, optional
        non_empty : bool
            Refuse an empty list.

        Returns
        -------
        list of float or None

        Raises
        ------
        ScenarioError
        """

        def ok(x):
            return (
                isinstance(x, list)
                and (len(x) > 0 or not non_empty)
                and all(
                    _is_number(e) and (low is None or e >= low) and (high is None or e <= high)
                    for e in x
                )
            )

        within = f" in [{low:g}, {high:g}]" if low is not None and high is not None else ""
        x = self.value(key, ok, f"a non-empty list of numbers{within}", default)
        return x if x is None else [float(e) + 0.0 for e in x]  # -0.0 read as 0.0

    @overload
    def path(
        self, key: str, default: None, *, folder: bool = False, roots: Sequence[Path] = ()
    ) -> Path | None: ...

    @overload
    def path(
        self,
        key: str,
        default: str | Path = ...,
        *,
        folder: bool = False,
        roots: Sequence[Path] = (),
    ) -> Path: ...

    def path(
        self,
        key: str,
        default: Any = _REQUIRED,
        *,
        folder: bool = False,
        roots: Sequence[Path] = (),
    ) -> Path | None:
        """A data file (``folder=True``: a folder), confined to the folders data may be read from.

        Those are the scenario file's folder, the ``data_dirs`` the user named (``--data-dir``) and
        ``roots`` (e.g. ``$DPGAMES_TNTP_DIR``).  A relative path is looked up in them in that order.
        After resolving symbolic links and ``..`` the path must lie inside one of them, and be a
        regular file (a folder); anything else is refused without being opened.

        Parameters
        ----------
        key : str
        default : str or None, optional
        folder : bool
        roots : sequence of Path
            Further allowed folders.

        Returns
        -------
        Path or None
            The resolved path.

        Raises
        ------
        ScenarioError
            Outside the allowed folders, missing, or not a regular file (folder).
        """
        text = self.string(key, default)
        if text is None:
            return None
        allowed = [d for d in (self.base_dir, *self.data_dirs, *roots) if d is not None]
        if not allowed:
            raise self.error(
                key,
                "this scenario has no folder to read data files from (a scenario given as "
                "text: pass base_dir or data_dirs)",
            )
        given = Path(text)
        if given.is_absolute():
            candidate = given
        else:
            tries = [d / given for d in allowed]
            candidate = next((c for c in tries if _lexists(c)), tries[0])
        folders = ", ".join(str(d) for d in allowed)
        try:
            where = confine(
                candidate, allowed, "", f"{folders}; add one with --data-dir", _short(text)
            )
            if folder:
                check_folder(where)
            else:
                check_regular(where)
        except ValidationError as exc:
            message = str(exc).strip()
            if isinstance(exc, FileError):
                message = exc.reason.replace("file not found", "not found")
                message = f"{'folder' if folder else 'file'} {_short(text)} {message}"
            raise self.error(key, message) from None
        return where

    def table(self, key: str, required: bool = False) -> Table:
        """A sub-table (an empty one when absent and not required).

        Parameters
        ----------
        key : str
        required : bool

        Returns
        -------
        Table
            Its field names are prefixed with ``key.``.

        Raises
        ------
        ScenarioError
            Required and absent, or not a table.
        """
        present = key in self.data
        raw = self._get(key, _REQUIRED if required else {})
        if present and not isinstance(raw, dict):
            raise self.error(
                key, f"must be a table ([{self.prefix}{_shown_key(key)}]), got {_short(raw)}"
            )
        return Table(
            raw, self.source, f"{self.prefix}{_shown_key(key)}.", self.base_dir, self.data_dirs
        )

    def done(self) -> None:
        """Refuse any key that no reader asked for (typos must not be silently ignored)."""
        unknown = sorted(set(self.data) - self._read)
        if unknown:
            allowed = ", ".join(sorted(self._read)) or "none"
            close = (
                difflib.get_close_matches(unknown[0], sorted(self._read), n=1)
                if isinstance(unknown[0], str)
                else []
            )
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise self.error(unknown[0], f"unknown key ({hint}allowed here: {allowed})")
