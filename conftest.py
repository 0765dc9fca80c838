"""Repository-wide pytest configuration: keep Hypothesis reproducible in CI."""

from __future__ import annotations

import os

try:
    from hypothesis import HealthCheck, settings
except ImportError:  # the [fuzzing] extra is not installed: a user's first run needs none
    pass
else:
    settings.register_profile(
        "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    settings.register_profile("dev", deadline=None)
    settings.load_profile("ci" if os.environ.get("CI") else "dev")
