"""Bounds on every request paraamr makes to the Hugging Face Hub: a Hub that never answers ends in
an error, never a hang (:func:`bound_hub_requests`: :func:`hub_timeout` seconds without a byte,
``PARAAMR_HUB_TIMEOUT``); with no network (:func:`hub_unreachable`) a Hub dataset loads from the
cache or fails at once (:func:`load_hub_dataset`).

>>> hub_timeout({"PARAAMR_HUB_TIMEOUT": "5"}), hub_timeout({})
(5.0, 30.0)
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from paraamr.errors import InputError, UsageError
from paraamr.options import check_number

__all__ = [
    "CONNECT_RETRIES",
    "DEFAULT_TIMEOUT",
    "HELP",
    "bound_hub_requests",
    "hub_timeout",
    "hub_unreachable",
    "load_hub_dataset",
    "unloadable_dataset",
]

#: Seconds a Hub request may wait for a byte (``PARAAMR_HUB_TIMEOUT``).
DEFAULT_TIMEOUT = 30.0
#: Seconds to connect, at most.
CONNECT_TIMEOUT = 10.0
#: Retries of a connection that cannot be made (refused, reset while connecting).
CONNECT_RETRIES = 3
#: What ``--help`` says of it.
HELP = (
    "Hub requests give up after PARAAMR_HUB_TIMEOUT seconds without an answer (default 30; "
    "transfers are retried up to 5 times)"
)

#: The proxy variables httpx follows (``https_proxy`` or ``HTTPS_PROXY`` ...).
PROXIES = ("https", "http", "all")

_bound: list[float] = []


def hub_timeout(environ: Mapping[str, str] | None = None) -> float:
    """Seconds a Hub request may wait (``PARAAMR_HUB_TIMEOUT``, a finite number > 0; default 30)."""
    text = (os.environ if environ is None else environ).get("PARAAMR_HUB_TIMEOUT")
    if not text:
        return DEFAULT_TIMEOUT
    try:
        return check_number(float(text), "PARAAMR_HUB_TIMEOUT", above=0)
    except ValueError:
        raise UsageError(f"PARAAMR_HUB_TIMEOUT={text!r}: must be a finite number of seconds > 0") from None


def bound_hub_requests() -> None:
    """Give huggingface_hub's shared HTTP client a timeout (:func:`hub_timeout`) and connection
    retries, once per process (a later call with another ``PARAAMR_HUB_TIMEOUT`` applies it).
    Versions of huggingface_hub before its httpx client (before 1.0) keep their own defaults."""
    import huggingface_hub

    seconds = hub_timeout()
    set_factory = getattr(huggingface_hub, "set_client_factory", None)
    if set_factory is None or _bound == [seconds]:
        return
    from huggingface_hub.utils import _http

    base = _http.default_client_factory

    def factory():  # the library's client, with bounds
        client = base()
        timeout = type(client.timeout)(seconds, connect=min(seconds, CONNECT_TIMEOUT))
        client.timeout = timeout
        transport = getattr(client, "_transport", None)
        pool = getattr(transport, "_pool", None)
        if pool is not None and hasattr(pool, "_retries"):
            pool._retries = CONNECT_RETRIES
        return client

    set_factory(factory)
    _bound[:] = [seconds]


def network_problem(err: BaseException) -> str:
    """What went wrong with a Hub request, for a one-line error: a timeout named as the bound it
    met, else the error's class and text.

    >>> network_problem(TimeoutError("timed out"))
    'no answer within 30 s (PARAAMR_HUB_TIMEOUT)'
    """
    if isinstance(err, TimeoutError) or type(err).__name__.endswith("Timeout"):
        return f"no answer within {hub_timeout():g} s (PARAAMR_HUB_TIMEOUT)"
    return f"{type(err).__name__}: {err}"


def hub_unreachable() -> str | None:
    """Why the Hub cannot be reached at all: its host name does not resolve (no network), else None
    (offline mode on, a proxy, which resolves names itself, or the name resolves: requests will tell
    the rest)."""
    from huggingface_hub import constants

    host = urlsplit(constants.ENDPOINT).hostname
    proxy = any(os.environ.get(f"{k}_proxy") or os.environ.get(f"{k}_PROXY".upper()) for k in PROXIES)
    if constants.HF_HUB_OFFLINE or not host or proxy:
        return None
    try:
        socket.getaddrinfo(host, None)
    except socket.gaierror:
        return f"{host} cannot be resolved: no network"
    return None


@contextlib.contextmanager
def _offline(on: bool) -> Iterator[None]:
    """huggingface_hub and datasets in offline mode (``HF_HUB_OFFLINE``) while the block runs."""
    if not on:
        yield
        return
    import datasets.config
    from huggingface_hub import constants

    was = constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = datasets.config.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE = was


def load_hub_dataset(spec: str, config: str | None = None, *, detail: str = "", **kwargs: Any) -> Any:
    """``datasets.load_dataset(spec, config, **kwargs)``, any error as one line naming ``spec`` and
    ``detail`` (which config or split; :func:`unloadable_dataset`). With no network
    (:func:`hub_unreachable`) it loads offline, from the cache, at once, where huggingface_hub
    would retry for half a minute before it looked there."""
    import datasets

    unreachable = hub_unreachable()
    try:
        with _offline(unreachable is not None):
            return datasets.load_dataset(spec, config, **kwargs)
    except Exception as err:  # the loader's errors have no common class; each one means "cannot load"
        offline = unreachable and isinstance(err, ConnectionError)  # the reason it could not be fetched
        raise unloadable_dataset(spec, ConnectionError(unreachable) if offline else err, detail) from err


def unloadable_dataset(spec: str, err: BaseException, detail: str = "") -> InputError:
    """The one line for a dataset ``spec`` that ``datasets.load_dataset`` could not load (``detail``:
    which config or split), with the way out when it is not here and the Hub cannot be reached.

    >>> str(unloadable_dataset("org/no-such-ds", ConnectionError("Couldn't reach it"), " (config x)"))
    "org/no-such-ds (config x): not here, and the Hub cannot be reached (Couldn't reach it); without a \
network, fetch it elsewhere (hf download --repo-type dataset org/no-such-ds) and copy the Hub cache, or \
give a local path"
    >>> str(unloadable_dataset("org/ds", ValueError("BuilderConfig 'x' not found."), " (config x)"))
    "org/ds (config x): cannot be loaded (BuilderConfig 'x' not found.)"
    """
    reason = str(err).splitlines()[0] if str(err) else type(err).__name__
    if not isinstance(err, ConnectionError) or Path(spec).expanduser().exists():
        return InputError(f"{spec}{detail}: cannot be loaded ({reason})")
    return InputError(
        f"{spec}{detail}: not here, and the Hub cannot be reached ({reason}); without a network, fetch it "
        f"elsewhere (hf download --repo-type dataset {spec}) and copy the Hub cache, or give a local path"
    )
