"""``memex serve``: a local, read-only web inspector of a durable store (the ``web`` extra).

Pages: the overview, a search with retrieval's explanations, an item with
its provenance, relations and full history, the contradictions, the log,
the intents and tasks, and the hash chain verified on demand; every page
can show the past (``?as_of=WHEN``) and follows the log live. The store is
opened read-only and nothing here writes.

* :mod:`memex.web.source`: the store, its past states, the verification;
* :mod:`memex.web.pages`: what each page shows, as plain data;
* :mod:`memex.web.app`: the routes, templates and error pages
  (:func:`create_app`);
* :mod:`memex.web.security`: the Host, method and token rules and the
  security headers.

This package imports Starlette and Jinja2 (and ``memex serve`` uvicorn):
``import memex`` never imports it.
"""

from memex.web.app import create_app
from memex.web.security import bind_rule, check_token
from memex.web.source import BadParameter, StoreSource

__all__ = ["create_app", "StoreSource", "BadParameter", "bind_rule", "check_token"]
