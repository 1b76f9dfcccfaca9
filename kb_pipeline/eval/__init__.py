"""Release evaluation: golden set and draft metrics per release, with blocking gates."""
