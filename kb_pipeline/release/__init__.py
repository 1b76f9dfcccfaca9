"""Releases: build a release's index beside the active one, promote it when the gates pass."""
