"""Words people read, shared by the command path, the mail and the pages: data
(values and the summary line), steps (titles, failures), decisions and time zones."""
