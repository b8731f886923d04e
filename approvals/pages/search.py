"""Search over the requests someone may read, and its CSV export."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import (
    HttpRequest,
    HttpResponse,
    StreamingHttpResponse,
)
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.utils import timezone

from ..web import search as search_page
from ..web import search_results
from ..web.search import PAGE_SIZE, WorkflowSearch
from .common import _member
from .inbox import _workflow_rows


@login_required
def search(request: HttpRequest) -> HttpResponse:
    """The same search as ``GET /api/workflows`` (approvals.web.search), with the same
    parameter names, so a search's address can be shared or asked of the API."""
    _member(request)
    filters = WorkflowSearch(request.GET or None, request=request)
    paging = search_results.PageForm(request.GET)
    rows: list[dict[str, Any]] | None = None
    links: dict[str, str] = {}
    status, page = 200, paging.number()
    if request.GET:
        if filters.is_valid() and paging.is_valid():
            size = PAGE_SIZE
            found = filters.results(
                limit=size + 1, offset=(page - 1) * size, columns=search_page.PAGE_COLUMNS
            )
            rows = _workflow_rows(filters.user, found[:size])
            links = search_results.page_links(request.GET.dict(), page, more=len(found) > size)
        else:
            status = 400
    context = {"form": filters.form, "paging": paging, "page": page, "links": links}
    return render(request, "approvals/search.html", {**context, "rows": rows}, status=status)


@login_required
def search_export(request: HttpRequest) -> HttpResponseBase:
    """The whole result of a search as CSV, streamed; a refused search is the search
    page with its errors (and nothing is exported)."""
    _member(request)
    filters = WorkflowSearch(request.GET, request=request)
    if not filters.is_valid():
        context = {"form": filters.form, "paging": search_results.PageForm(), "rows": None}
        return render(request, "approvals/search.html", context, status=400)
    lines = search_results.search_csv(filters, zone=timezone.get_current_timezone())
    response = StreamingHttpResponse(lines, content_type="text/csv; charset=utf-8")
    name = search_results.csv_filename(timezone.localtime())
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
