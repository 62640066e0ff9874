"""The web pages of ``dprm serve`` under ``/ui``: analysts' and data owners' sides.

Server-rendered HTML (Jinja2 templates, autoescaped) that HTMX (vendored in
``static/htmx.min.js``, no build step, no CDN) only enhances: every page reads and
every form posts without JavaScript. The pages run in the API's process on its
database and act through the API's own functions (:class:`dprm.server.api.service.Service`:
the same budget checks, charges, jobs and primitives), so an analyst sees on a page
only what the API would answer it.

Modules: :mod:`~dprm.server.web.sessions` (sign-in cookies),
:mod:`~dprm.server.web.csrf` (form tokens), :mod:`~dprm.server.web.forms` (form
fields to API requests), :mod:`~dprm.server.web.pages` (rendering, error pages),
:mod:`~dprm.server.web.access` (the session checks of a page), the pages' routers
:mod:`~dprm.server.web.signin_pages`, :mod:`~dprm.server.web.analyst_pages`,
:mod:`~dprm.server.web.job_pages`, :mod:`~dprm.server.web.owner_pages` (the owner's
side, whose forms' answers cross their redirect in :mod:`~dprm.server.web.owner_notices`), and :mod:`~dprm.server.web.routes` (all of them and
:func:`~dprm.server.web.routes.mount`).
"""

