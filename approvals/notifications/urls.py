from django.urls import path

from . import views

urlpatterns = [
    path("mail/links/<str:token>", views.mail_link, name="mail-link"),
    path("account/notifications", views.notification_settings, name="notification-settings"),
]
