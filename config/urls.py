"""Root URL configuration."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from approvals.pages import errors as error_pages

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


# Pages get styled error pages with the navigation; /api/ keeps its JSON envelope.
handler400 = error_pages.bad_request
handler403 = error_pages.permission_denied
handler404 = error_pages.page_not_found
handler500 = error_pages.server_error
