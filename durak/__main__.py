"""``python -m durak``: the ``durak`` command."""

from durak.cli import main

raise SystemExit(main())
