"""``python generate.py`` / ``accelerate launch generate.py ...``: ``paraamr generate`` (see --help)."""

if __name__ == "__main__":  # (worker processes started by spawn or forkserver import this file again)
    from paraamr.cli import entry

    entry("generate")
