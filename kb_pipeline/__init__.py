"""The Dagster side: assets, checks, sensors, schedules and the `kb` command line."""

from kb_pipeline.quiet import silence_known_noise

silence_known_noise()
