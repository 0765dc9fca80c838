"""``python -m pytest_reasoning.cli``."""

from . import main

raise SystemExit(main())
