"""The admin: the site and its home (site, home), sign-in (login), the models' pages
(registry), and the screens of their own: templates, workflows, operations,
offboarding, and the date-and-time labels (labels).

Django's autodiscovery imports this package; importing ``registry`` registers the
models on the site.
"""

from . import registry  # noqa: F401
