"""E-mail notifications: an outbox of mail rows written in the command's transaction,
the sender that drains it, the daily digest, and signed one-click approval links."""
