"""Audit: the export of workflow histories, the proof that nothing was altered (hash
chains checked against signed seals of their heads) and replay verification."""
