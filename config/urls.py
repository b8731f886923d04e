"""Root URL configuration."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path("admin/", admin.site.urls),
    # Only the machine-readable schema: the Swagger and ReDoc views load their
    # JavaScript from a CDN, which deployments cannot be assumed to reach.
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/", include("approvals.api.urls")),
    path("", include("approvals.urls")),
]


def _api_aware(status: int, code: str, message: str):  # type: ignore[no-untyped-def]
    """Answer errors under /api/ in the API's envelope; pages keep Django's."""
    from django.views import defaults

    from approvals.api.errors import json_error

    page_view = {404: defaults.page_not_found, 500: defaults.server_error}[status]

    def view(request, exception=None):  # type: ignore[no-untyped-def]
        if request.path.startswith("/api/"):
            return json_error(request, status, code, message)
        return page_view(request, exception) if status == 404 else page_view(request)

    return view


handler404 = _api_aware(404, "NOT_FOUND", "Not found.")
handler500 = _api_aware(500, "INTERNAL", "Something went wrong on our side; it has been logged.")
