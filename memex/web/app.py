"""The inspector's web application: routes, templates, error pages.

:func:`create_app` builds the ASGI application ``memex serve`` runs: a
Starlette application of read-only pages over a
:class:`~memex.web.source.StoreSource`, wrapped in the
:class:`~memex.web.security.Guard` (Host, method and token rules, security
headers). Pages are server-rendered Jinja2 templates with autoescaping on,
so every value from the memory is shown as text, its control characters
marked instead of acting and the whole isolated from the text around it
(:func:`shown_value`, the templates' ``v`` filter); the one script
(``static/inspector.js``) and the vendored Cytoscape.js are files of the
package, loaded under a Content-Security-Policy that allows no inline
script.

Routes (every page takes ``?as_of=WHEN``: ``@POSITION``, an ISO time, a date, or
``live`` (also ``now``): the head, followed live, even under ``memex serve --as-of``):

* ``/`` the overview; ``/search``; ``/item/{id}`` (and ``/item?id=ID``, the
  address of the ids a path segment cannot carry: empty, ``.``, ``..``, ...);
  ``/contradictions``;
  ``/log``; ``/tasks`` (intents and tasks); ``/verify`` (the hash chain,
  checked on demand: ``/verify?run=1`` starts a check);
* ``/api/head`` and ``/api/verify``: JSON for the page script (the live
  banner, the verification's progress);
* ``/static/...``: the stylesheet, the script, Cytoscape.js and its licence.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable, Mapping
from importlib import resources
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import jinja2
import markupsafe
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from memex import __version__
from memex.errors import MemexError
from memex.web import pages
from memex.web.display import shown_value
from memex.web.security import Guard, allowed_host_names
from memex.web.source import LIVE, BadParameter, NotFound, StoreSource, View

__all__ = ["create_app", "NAVIGATION", "LIVE", "shown_value"]


#: The pages of the navigation bar: ``(path, title)``.
NAVIGATION = (
    ("/", "Overview"),
    ("/search", "Search"),
    ("/contradictions", "Contradictions"),
    ("/log", "Log"),
    ("/tasks", "Intents & tasks"),
    ("/verify", "Hash chain"),
)


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("memex.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    env.filters["v"] = shown_value
    # an id or a one-line value (author, scope, kind): its tab, LF and CR marked too
    env.filters["vid"] = lambda v: shown_value(v, breaks=True)
    env.filters["raw"] = _raw
    env.filters["when"] = pages.when
    env.filters["num"] = _num
    env.filters["pct"] = lambda v: "-" if v is None else f"{100 * float(v):.0f}%"
    env.filters["idpath"] = lambda i: quote(str(i), safe="")
    env.filters["short"] = _short_id
    # a text of a list (a reason, a label): cut to a length a list can show, with "…"
    env.filters["cut"] = lambda v, n=pages.REASON: "" if v is None else pages.cut(str(v), n)
    return env


def _finalize(value: Any) -> Any:
    """Every ``{{ ... }}`` of a template: a string not yet markup has its control
    characters shown as ``[U+XXXX]`` (:func:`~memex.web.display.visible`, the tab, line
    feed and carriage return too), wherever it goes (an attribute, a title: the places
    :func:`shown_value` cannot go)."""
    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return pages.visible(value, breaks=True)
    return value


def _raw(value: Any) -> markupsafe.Markup:
    """A value sent back as it is (escaped, its control characters kept): what a form
    field holds, so that submitting the form again asks for the same value."""
    return markupsafe.escape("" if value is None else str(value))


def _short_id(value: Any) -> str:
    """An id as links show it: a UUID's first 8 and last 4 digits (ids made in one
    millisecond share their first 12), any other id up to 14 characters; an id of
    white space only (or none) as its code points, so that its link has a text."""
    text = str(value)
    if not text:
        return "(empty id)"
    if not text.strip():
        return "(" + " ".join(f"U+{ord(c):04X}" for c in text[:4]) + ")"
    return text if len(text) <= 14 else f"{text[:8]}…{text[-4:]}"


def _num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return format(value, f".{digits}g")


class _Pages:
    """The route handlers, sharing the source, the templates and the per-state caches."""

    def __init__(self, source: StoreSource) -> None:
        self.source = source
        self.env = _environment()
        self.memo = pages.Memo()
        self.ledger = pages.ContradictionLedger()

    # -- rendering --------------------------------------------------------------------------
    def render(
        self,
        request: Request,
        template: str,
        view: View | None,
        status_code: int = 200,
        address: str | None = None,
        **data: Any,
    ) -> HTMLResponse:
        as_of = request.query_params.get("as_of") or None

        def href(path: str, **params: Any) -> str:
            """A link within the inspector that keeps the page's ``as_of``."""
            query = {k: v for k, v in params.items() if v not in (None, "")}
            if as_of and "as_of" not in query:
                query["as_of"] = as_of
            return path + (f"?{urlencode(query)}" if query else "")

        def item_href(item_id: Any, **params: Any) -> str:
            """The link to an id's page (:func:`~memex.web.display.item_address`), keeping
            the page's ``as_of``."""
            address = pages.item_address(str(item_id))
            path, _, query = address.partition("?")
            rest = href(path, **params)
            if not query:
                return rest
            more = rest.partition("?")[2]
            return f"{path}?{query}" + (f"&{more}" if more else "")

        kept = [
            (k, v)
            for k, v in request.query_params.multi_items()
            if k not in ("as_of", "page", "upto", "history_page")
            and not (address is not None and k == "id")
        ]
        # this page's own address, without as_of: built from the real values (an item's
        # page from its id, pages.item_address), never from the decoded path, which the
        # page would show marked and a browser may alter (trailing spaces, CR/LF)
        path, _, own_query = (address or quote(request.url.path)).partition("?")
        query = "&".join(q for q in (own_query, urlencode(kept, quote_via=quote)) if q)
        here = f"{path}?{query}" if query else path
        # the time bar's hidden fields, for a browser without the script (which goes to
        # here + as_of itself); none holding a line feed or a carriage return: a form
        # round trip turns either into CR LF (that page is reached by the script only)
        travel_fields = [
            (k, v)
            for k, v in [*parse_qsl(own_query, keep_blank_values=True), *kept]
            if not ("\r" in k + v or "\n" in k + v)
        ]
        timeline = (
            [(p, pages.when(t)[:16]) for p, t in self.source.timeline(view.head)] if view else []
        )
        # a parameter with a control character: its form field holds it as it is (so the
        # form asks the same again), and the page says so, with the characters shown
        controls = [
            (k, v)
            for k, v in request.query_params.multi_items()
            if pages.ID_CONTROL_CHARACTERS.search(k + v)
        ]
        # the head: the page without as_of, unless memex serve --as-of pins another
        # default: then as_of=live (the head, followed as the log grows)
        now_href = here
        if view and self.source.default_as_of:
            now_href += ("&" if "?" in here else "?") + "as_of=live"
        html = self.env.get_template(template).render(
            request_path=request.url.path,
            travel_action=path,
            travel_fields=travel_fields,
            here=here,
            timeline=timeline,
            now_href=now_href,
            navigation=NAVIGATION,
            version=__version__,
            view=view,
            as_of=as_of or "",
            default_as_of=self.source.default_as_of,
            kept=kept,
            controls=controls,
            href=href,
            item_href=item_href,
            **data,
        )
        return HTMLResponse(html, status_code=status_code)

    def error_page(
        self, status: int, title: str, message: str, link: tuple[str, str] | None = None
    ) -> tuple[bytes, str]:
        """The bytes and type of an error page (the Guard's refusals use it too);
        ``link``: ``(address, text)`` of a page to go to instead, or ``None``."""
        html = self.env.get_template("error.html").render(
            request_path="",
            navigation=NAVIGATION,
            version=__version__,
            view=None,
            timeline=[],
            now_href="/",
            as_of="",
            default_as_of=None,
            kept=[],
            controls=[],
            href=lambda path, **_: path,
            item_href=lambda item_id, **_: pages.item_address(str(item_id)),
            status=status,
            title=title,
            message=message,
            first=None,
            link=link,
            travel_action="/",
            travel_fields=[],
            here="/",
        )
        return html.encode("utf-8"), "text/html; charset=utf-8"

    def _error(
        self, status: int, title: str, message: str, link: tuple[str, str] | None = None
    ) -> Response:
        body, content_type = self.error_page(status, title, message, link)
        return Response(body, status_code=status, media_type=content_type)

    def page(
        self,
        request: Request,
        template: str,
        build: Callable[[View, Mapping[str, str]], dict[str, Any]],
        address: str | None = None,
    ) -> Response:
        params = dict(request.query_params)
        with self.source.view(params.get("as_of")) as view:
            try:
                data = build(view, params)
            except NotFound as e:  # on the page asked for, with its time bar (another position)
                return self.render(
                    request,
                    "error.html",
                    view,
                    status_code=404,
                    status=404,
                    title="Not found",
                    message=str(e),
                    first=e.first,
                    link=None,
                    address=address,
                )
            return self.render(request, template, view, address=address, **data)

    # -- handlers ---------------------------------------------------------------------------
    def overview(self, request: Request) -> Response:
        return self.page(
            request,
            "overview.html",
            lambda view, _: pages.overview_page(view, self.memo, self.source.verification.status()),
        )

    def search(self, request: Request) -> Response:
        return self.page(
            request, "search.html", lambda view, params: pages.search_page(view, params, self.memo)
        )

    def item(self, request: Request) -> Response:
        if "id" in request.path_params:
            item_id = str(request.path_params["id"])
        else:  # /item?id=...: the ids a path segment cannot carry (pages.item_address)
            found = request.query_params.get("id")
            if found is None:
                raise BadParameter("id", "expected the id of an item: /item?id=ID or /item/ID")
            item_id = found
        return self.page(
            request,
            "item.html",
            lambda view, params: pages.item_page(view, item_id, params),
            address=pages.item_address(item_id),
        )

    def contradictions(self, request: Request) -> Response:
        return self.page(
            request,
            "contradictions.html",
            lambda view, params: pages.contradictions_page(view, params, self.ledger),
        )

    def log(self, request: Request) -> Response:
        return self.page(request, "log.html", pages.log_page)

    def tasks(self, request: Request) -> Response:
        return self.page(request, "tasks.html", pages.tasks_page)

    def verify(self, request: Request) -> Response:
        if request.query_params.get("run"):
            # the one request that starts work: not from another site's page (an <img>)
            if not _same_site(request):
                return self._error(
                    403, "Forbidden", "Start a verification from the inspector's own page."
                )
            if request.method == "HEAD":  # HEAD has no side effect: what GET would answer
                return Response(status_code=303, headers={"location": "/verify"})
            self.source.verification.start()
            rest = {k: v for k, v in request.query_params.items() if k != "run"}
            return RedirectResponse(
                "/verify" + (f"?{urlencode(rest)}" if rest else ""), status_code=303
            )
        return self.page(
            request,
            "verify.html",
            lambda view, _: {"status": self.source.verification.status()},
        )

    def api_head(self, request: Request) -> Response:
        with self.source.lock:
            head = self.source.store.refresh()
        return JSONResponse({"head": head})

    def api_verify(self, request: Request) -> Response:
        return JSONResponse(self.source.verification.status())

    # -- errors -------------------------------------------------------------------------------
    async def bad_parameter(self, request: Request, exc: Exception) -> Response:
        name = exc.name if isinstance(exc, BadParameter) else "?"
        link = None
        if isinstance(exc, pages.PastLastPage):  # the same page's last page
            query = [(k, v) for k, v in request.query_params.multi_items() if k != "page"]
            query.append(("page", str(exc.last)))
            link = (
                quote(request.url.path) + "?" + urlencode(query, quote_via=quote),
                f"go to page {exc.last}",
            )
        return self._error(400, f"Bad parameter: {name}", str(exc), link)

    async def not_found(self, request: Request, exc: Exception) -> Response:
        return self._error(404, "Not found", str(exc))

    async def http_error(self, request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        if status == 404:
            return self._error(
                404,
                "Not found",
                "The inspector has no page at this address.",
            )
        return self._error(status, "Error", str(getattr(exc, "detail", "")))

    async def server_error(self, request: Request, exc: Exception) -> Response:
        if isinstance(exc, MemexError):
            message = f"{type(exc).__name__}: {exc}"
        else:
            message = f"unexpected {type(exc).__name__} (the server's log has the details)"
            traceback.print_exception(exc)
        return self._error(500, "The store could not be read", message)


def _same_site(request: Request) -> bool:
    """Whether a request may start work: its ``Sec-Fetch-Site`` is ``same-origin`` or
    ``none`` (typed or bookmarked) when sent, and its ``Origin`` and ``Referer``, when
    sent, name this server (scheme, host and port of the request's own ``Host``).
    A request with none of them (curl, an old browser) is accepted."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return False
    own = f"{request.url.scheme}://{request.headers.get('host', '')}".lower()
    origin = request.headers.get("origin")
    if origin is not None and origin.strip().lower() != own:
        return False  # includes "null" (a sandboxed frame, a data: page)
    referer = request.headers.get("referer")
    if referer is not None:
        parts = urlsplit(referer.strip())
        if f"{parts.scheme}://{parts.netloc}".lower() != own:
            return False
    return True


def create_app(
    source: StoreSource,
    *,
    host: str = "127.0.0.1",
    allow_hosts: Iterable[str] = (),
    token: str | None = None,
) -> Guard:
    """The inspector's ASGI application over ``source``.

    Args:
        source: the store and its past states (:class:`~memex.web.source.StoreSource`).
        host: the address served (``--host``): the ``Host`` names accepted
            are it, the loopback names when it is loopback, and ``allow_hosts``.
        allow_hosts: more ``Host`` names to accept (``--allow-host``).
        token: the token every request must carry (``None``: none; see
            :class:`~memex.web.security.Guard`).
    Returns:
        An ASGI application (run it with uvicorn, or test it with
        Starlette's ``TestClient``).
    Raises:
        ValidationError: a token :func:`~memex.web.security.check_token` refuses.
    """
    handlers = _Pages(source)
    static = resources.files("memex.web") / "static"
    routes = [
        Route("/", handlers.overview),
        Route("/search", handlers.search),
        Route("/item", handlers.item),
        Route("/item/{id:path}", handlers.item),
        Route("/contradictions", handlers.contradictions),
        Route("/log", handlers.log),
        Route("/tasks", handlers.tasks),
        Route("/verify", handlers.verify),
        Route("/api/head", handlers.api_head),
        Route("/api/verify", handlers.api_verify),
        Mount("/static", app=StaticFiles(directory=str(static)), name="static"),
    ]
    errors: Mapping[Any, Callable[[Request, Exception], Any]] = {
        BadParameter: handlers.bad_parameter,
        NotFound: handlers.not_found,
        HTTPException: handlers.http_error,
        Exception: handlers.server_error,
    }
    app = Starlette(routes=routes, exception_handlers=dict(errors))
    return Guard(
        app,
        allowed_hosts=allowed_host_names(host, allow_hosts),
        token=token,
        refuse=handlers.error_page,
    )
