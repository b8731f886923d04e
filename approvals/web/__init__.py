"""The pages' helpers: how amounts, steps, statuses and histories read to people."""
