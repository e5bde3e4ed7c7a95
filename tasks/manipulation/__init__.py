"""Manipulation tasks for fixed-base arms."""
