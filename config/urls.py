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
