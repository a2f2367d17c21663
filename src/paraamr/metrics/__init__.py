"""Pure functions behind the evaluate modules in ``metrics/`` (similarity, lexical, TED)."""
