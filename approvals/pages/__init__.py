"""The pages people use, one module per family: inbox, request (a workflow, deciding,
resubmitting), start, drafts, files, conversation, absence, search, analytics and the
error pages. urls.py names the views; nothing is re-exported here."""
