"""``python -m costsim``: the same as the ``costsim`` command."""

from costsim.cli import main

if __name__ == "__main__":
    main()
