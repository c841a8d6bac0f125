"""The verb surface: ``Navigator`` and the daemon client implement :class:`navigator.verbs.Verbs`
with the same signatures, and the daemon serves exactly its verbs.

mypy checks the same statically (``_IMPLEMENTS`` in navigator/api.py and
navigator/frontends/client.py); this test also catches a verb added to one side only, or a
default that differs, which a structural check lets through.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

import pytest

from navigator.api import Navigator
from navigator.frontends.client import DaemonClient
from navigator.verbs import SERVED, Verbs, served

VERBS = sorted(
    name for name, value in vars(Verbs).items() if not name.startswith("_") and inspect.isfunction(value)
)
CLIENT_OWN = {"call", "connect", "daemon_status", "stop"}
"""The client's methods that are about the daemon itself, not verbs of a repository."""
NAVIGATOR_IN_PROCESS = {
    "embed", "embed_rate", "embed_runtime", "exact", "files_changed", "grep_changed", "model_loaded", "relpath", "release_model",
    "resolve", "store", "suggestions", "team", "unfinished_note", "walk_options", "index_error",
}  # fmt: skip
"""Navigator's public names that are not verbs every front end may use (they need the process
that holds the index: the daemon and ``nav index`` call them on their own Navigator)."""


def _public(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def _shape(fn: Callable[..., object]) -> list[tuple[str, object, object, object]]:
    """A signature as (name, kind, default, annotation) per parameter, plus the return annotation."""
    sig = inspect.signature(fn)
    params = [(p.name, p.kind, p.default, p.annotation) for p in sig.parameters.values()]
    return [*params, ("->", None, None, sig.return_annotation)]


def test_the_protocol_has_the_verbs_the_daemon_serves() -> None:
    assert sorted(SERVED) == sorted(set(VERBS) - {"close"})
    assert len(set(SERVED)) == len(SERVED)


@pytest.mark.parametrize("impl", [Navigator, DaemonClient], ids=lambda c: c.__name__)
@pytest.mark.parametrize("verb", VERBS)
def test_each_implementation_has_each_verb_with_its_signature(impl: type, verb: str) -> None:
    assert _shape(getattr(impl, verb)) == _shape(getattr(Verbs, verb)), f"{impl.__name__}.{verb}"


def test_the_client_has_no_verb_the_protocol_lacks() -> None:
    assert "__getattr__" not in vars(DaemonClient), "a misspelt verb must be an AttributeError, not a request"
    assert _public(DaemonClient) - CLIENT_OWN == set(VERBS)


def test_every_public_navigator_method_is_a_verb_or_named_in_process_only() -> None:
    extra = _public(Navigator) - set(VERBS)
    assert extra == NAVIGATOR_IN_PROCESS, (
        "add the new method to navigator.verbs.Verbs (and the client, and the daemon's SERVED), "
        "or name it in NAVIGATOR_IN_PROCESS"
    )


def test_the_dispatch_table_binds_each_served_name_to_that_verb(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def hello():\n    return 1\n", encoding="utf-8")
    with Navigator(tmp_path) as nav:
        table = served(nav)
        assert list(table) == list(SERVED)
        for name, fn in table.items():
            assert getattr(fn, "__self__", None) is nav and fn.__name__ == name
        assert [s.name for s in table["definitions"]("hello").items] == ["hello"]


def test_a_misspelt_verb_is_an_attribute_error_not_a_request(tmp_path: Path) -> None:
    client = DaemonClient(tmp_path, autostart=False)
    with pytest.raises(AttributeError):
        client.refrences  # noqa: B018 - the access itself is the test


def test_the_fast_paths_requests_are_verbs_with_their_parameters() -> None:
    """The CLI's fast path (entry.py, which imports none of the engine) asks the daemon for
    served verbs, with parameters each verb takes: a renamed verb or option fails here."""
    from navigator.frontends import entry

    for command, (verb, _what, defaults, _text) in entry._HOT.items():
        assert verb in SERVED, command
        params = inspect.signature(getattr(Verbs, verb)).parameters
        assert set(defaults) <= set(params), (command, set(defaults) - set(params))
        first = next(iter(p for p in params.values() if p.name != "self"))
        assert first.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, (command, first)  # sent in __args__


def test_the_package_offers_the_protocol() -> None:
    import navigator

    assert navigator.Verbs is Verbs and "Verbs" in navigator.__all__
