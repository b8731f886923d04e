"""Writes. Every change to a workflow goes through ``commands.command_execute``."""
