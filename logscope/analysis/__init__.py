"""Derived figures computed from parsed frames."""
