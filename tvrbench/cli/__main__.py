"""``python -m tvrbench.cli``, the same as the ``tvrbench`` program."""

from tvrbench.cli import main

main()
