"""Voila for ``memlab classroom``: a kernel per visit, capped per visitor and in all.

Every page load starts a kernel (or takes a preheated one), whether or not the page's JavaScript ever runs, so a
loop of plain GETs would start kernels until the machine's memory runs out. Here the page's handler counts the
kernels each visit got, by the visitor's address: a visit beyond ``max_kernels_per_visitor`` kernels of its
address, or beyond ``max_kernels`` in all (the preheated pool included), gets an HTTP error page and starts
nothing. Idle kernels with no page connected are culled by jupyter_server's culler
(``MappingKernelManager.cull_idle_timeout``, which ``memlab classroom`` sets), which frees their places.

Run as ``python -m memlab.classroom_voila NOTEBOOK [Voila's options]`` (``memlab.classroom_server`` does).
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable

from jupyter_core.utils import ensure_async
from tornado import web
from traitlets import Integer
from voila.app import Voila
from voila.tornado.handler import TornadoVoilaHandler

__all__ = ["ClassroomVoila", "Visits"]


class Visits:
    """Which visitor's address each visit's kernel serves, and the visits still starting."""

    def __init__(self, *, per_visitor: int, in_all: int, pooled: int) -> None:
        self.per_visitor, self.in_all, self.pooled = per_visitor, in_all, pooled
        self.kernels: dict[str, str] = {}  # kernel id -> the address whose visit got it
        self.starting: Counter[str] = Counter()

    def refusal(self, address: str, live: set[str]) -> tuple[int, str] | None:
        """Why a visit from ``address`` gets no kernel (HTTP status, reason), or None when it may have one;
        ``live`` are the kernels running now (a culled or closed one's place is free again)."""
        self.kernels = {kernel: owner for kernel, owner in self.kernels.items() if kernel in live}
        mine = sum(owner == address for owner in self.kernels.values()) + self.starting[address]
        if mine >= self.per_visitor:
            return 429, f"this address already has {mine} lesson page(s) open, the most one visitor may have"
        if len(self.kernels) + sum(self.starting.values()) + self.pooled >= self.in_all:
            return 503, f"the classroom already runs {self.in_all} kernels, the most it starts"
        return None


class _Counted:
    """The kernel manager as one visit's handler sees it: every kernel it starts or takes is told to ``got``."""

    def __init__(self, manager: object, got: Callable[[str], None]) -> None:
        self._manager, self._got = manager, got

    def __getattr__(self, name: str) -> object:
        return getattr(self._manager, name)

    async def start_kernel(self, **kwargs: object) -> str:
        kernel = await ensure_async(self._manager.start_kernel(**kwargs))
        self._got(kernel)
        return kernel

    async def get_rendered_notebook(self, **kwargs: object) -> tuple:
        rendered = await self._manager.get_rendered_notebook(**kwargs)
        self._got(rendered[2])  # (render task, cells rendered so far, kernel id)
        return rendered


REFUSED = (
    "<!doctype html><title>memlab classroom: no lesson for now</title><p>No lesson page for now: {reason}. "
    "Close a lesson tab (or wait {minutes} minutes for an unused one to stop), then reload.</p>"
)


class _CappedHandler(TornadoVoilaHandler):
    """Voila's page handler, refusing a visit beyond the caps (``visits`` is set on a subclass per app)."""

    visits: Visits
    idle_seconds: int

    @property
    def kernel_manager(self) -> object:
        return _Counted(self.settings["kernel_manager"], self._got)

    def _got(self, kernel: str) -> None:
        address = self.request.remote_ip
        self.visits.kernels[kernel] = address
        if not getattr(self, "_counted", False):  # no longer starting: counted by its kernel from now on
            self._counted = True
            self.visits.starting[address] -= 1

    @web.authenticated
    async def get(self, path: str | None = None) -> None:
        address = self.request.remote_ip
        live = set(self.settings["kernel_manager"].list_kernel_ids())
        refused = self.visits.refusal(address, live)
        if refused is not None:
            status, reason = refused
            self.set_status(status)
            self.set_header("Retry-After", str(self.idle_seconds))
            self.finish(REFUSED.format(reason=html.escape(reason), minutes=max(1, round(self.idle_seconds / 60))))
            return
        self.visits.starting[address] += 1  # counted from now: concurrent visits cannot all pass the check
        try:
            async for chunk in self.get_generator(path=path):
                self.write(chunk)
                self.flush()
        finally:
            if not getattr(self, "_counted", False):
                self.visits.starting[address] -= 1


class ClassroomVoila(Voila):
    """Voila whose page handler caps the kernels visits get: per visitor's address, and in all."""

    max_kernels = Integer(40, config=True, help="The most kernels running at once, the preheated pool included.")
    max_kernels_per_visitor = Integer(3, config=True, help="The most kernels the visits of one address hold.")

    def init_handlers(self) -> list:
        configuration = self.voila_configuration
        pooled = configuration.default_pool_size if configuration.preheat_kernel else 0
        visits = Visits(per_visitor=self.max_kernels_per_visitor, in_all=self.max_kernels, pooled=pooled)
        idle = self.config.MappingKernelManager.get("cull_idle_timeout", 0) or 300
        handler = type("ClassroomHandler", (_CappedHandler,), {"visits": visits, "idle_seconds": int(idle)})
        rules = super().init_handlers()
        return [(rule[0], handler, *rule[2:]) if rule[1] is TornadoVoilaHandler else rule for rule in rules]


if __name__ == "__main__":
    ClassroomVoila.launch_instance()
