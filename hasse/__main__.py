"""``python -m hasse``: the command line (:func:`hasse.cli.main`)."""

from hasse.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
