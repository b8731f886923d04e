"""Root URL configuration."""

from collections.abc import Callable

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django.views import defaults
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from approvals.api.errors import NOT_FOUND

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view loads its init script from a URL: the CSP allows no inline script.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="schema", template_name="approvals/swagger_ui.html"
        ),
        name="api-docs",
    ),
    path("api/", include("approvals.api.urls")),
    path("", include("approvals.notifications.urls")),
    path("", include("approvals.urls")),
]


def _api_aware(status: int, code: str, message: str) -> Callable[..., HttpResponse]:
    """Answer errors under /api/ in the API's envelope; pages keep Django's."""

    def view(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
        from approvals.api.errors import json_error

        if request.path.startswith("/api/"):
            return json_error(request, status, code, message)
        if status == 404:
            return defaults.page_not_found(request, exception or Exception())
        return defaults.server_error(request)

    return view


handler404 = _api_aware(404, "NOT_FOUND", NOT_FOUND)
handler500 = _api_aware(500, "INTERNAL", "Something went wrong on our side; it has been logged.")
