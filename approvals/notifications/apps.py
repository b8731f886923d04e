from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "approvals.notifications"
    label = "notifications"
    default_auto_field = "django.db.models.BigAutoField"
    verbose_name = "Notifications"
