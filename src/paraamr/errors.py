"""Exception types of the package: every error raised on bad input is a :class:`ParaAMRError`."""

from __future__ import annotations


class ParaAMRError(Exception):
    """Base class of the package's errors."""


class AMRError(ParaAMRError, ValueError):
    """A graph that is not valid PENMAN AMR, or an impossible operation on it."""


class ModelNotFoundError(ParaAMRError, FileNotFoundError):
    """A model that is not on disk and cannot be fetched; the message says what to fetch and how."""


class InputError(ParaAMRError, ValueError):
    """Input data that cannot be read; the message names the file and the place."""
