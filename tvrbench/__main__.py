"""``python -m tvrbench``, the same as the ``tvrbench`` program."""

from tvrbench.cli import main

main()
