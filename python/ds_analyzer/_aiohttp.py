"""The job's aiohttp requests to the data's origins: counted, and in a cached block answered from the local copy.

fsspec's HTTPFileSystem, s3fs and gcsfs send through aiohttp, not http.client, so _http.py's patch does not see
them. This wraps ClientSession._request (every get, head and request of a session, whatever its event loop) with
the same semantics: a request to DSA_NET_ORIGINS counts in the same counters (requests, bytes, timings, statuses),
its bytes being the body bytes its response's stream took in; in a cached block a GET or HEAD of a data object is
answered by _serve.py's local socket, parsed by http.client as a request answered there is (so the status, 206 or
416 for a Range, the headers and the body are built in one place), and counted as localRequests and localBytes.
A response released before its end counts what its stream took in: over the network what aiohttp read ahead,
from the copy the chunks (CHUNK) handed to the stream.
Patched when the job imports aiohttp (_auto.py), only where _http.py counts.
"""

import http.client
import types

from . import _http, _serve

CHUNK = 65536


def _target(url):
    """What _http and _serve read of a connection: the request's host, port and scheme's port."""
    default = 443 if url.scheme in ("https", "wss") else 80
    return types.SimpleNamespace(host=url.host or "", port=url.port or default, default_port=default)


def _headers(session, kwargs):
    from multidict import CIMultiDict

    headers = CIMultiDict(session._default_headers)
    headers.update(kwargs.get("headers") or {})
    return headers


def _local_response(session, method, url, kwargs, target, mode):
    """The copy's answer as an aiohttp response, or None when the request goes to the network."""
    local = _serve.answer(target, method, str(url), mode)
    if local is None:
        return None
    from aiohttp import client_reqrep
    from multidict import CIMultiDict, CIMultiDictProxy

    headers = _headers(session, kwargs)
    wanted = headers.get("Range")
    local.sendall(("%s / HTTP/1.1\r\n%s\r\n" % (method, "Range: %s\r\n" % wanted if wanted else "")).encode("latin-1"))
    parsed = http.client.HTTPResponse(local, method=method)
    parsed.begin()
    _http.count_local()
    _http._begin_local(parsed)
    info = client_reqrep.RequestInfo(url, method, CIMultiDictProxy(headers), url)
    response = session._response_class(
        method,
        url,
        writer=None,
        continue100=None,
        timer=None,
        request_info=info,
        traces=[],
        loop=session._loop,
        session=session,
    )
    response._connection = None
    response.version = client_reqrep.HttpVersion11
    response.status, response.reason = parsed.status, parsed.reason
    fields = CIMultiDict(parsed.getheaders())
    response._headers = CIMultiDictProxy(fields)
    response._raw_headers = tuple((k.encode("latin-1"), v.encode("latin-1")) for k, v in fields.items())
    response.content = _stream_class()(parsed, session._loop)
    response._closed = False
    if kwargs.get("raise_for_status", getattr(session, "_raise_for_status", False)) is True:
        response.raise_for_status()  # a 416 raises where the session asks, as the origin's would
    return response


_STREAM = []


def _stream_class():
    """aiohttp's StreamReader fed from the parsed local answer as the reader asks (no task, no whole-file read)."""
    if _STREAM:
        return _STREAM[0]
    from aiohttp import streams

    class _Paused:
        _reading_paused = False

        def pause_reading(self):
            pass

        def resume_reading(self):
            pass

    class LocalStream(streams.StreamReader):
        def __init__(self, parsed, loop):
            super().__init__(_Paused(), CHUNK, loop=loop)
            self._dsa_parsed = parsed

        async def _wait(self, func_name):  # every read waits here for more: the next chunk of the copy
            chunk = self._dsa_parsed.read(CHUNK) if not self._eof else b""
            if chunk:
                self.feed_data(chunk)
            else:
                self._dsa_parsed.close()
                self.feed_eof()

        def set_exception(self, exc):  # the response was released or closed before its end: its bytes counted
            self._dsa_parsed.close()
            super().set_exception(exc)

    _STREAM.append(LocalStream)
    return LocalStream


def patch(aiohttp):
    """Wraps ClientSession._request and ClientResponse's release and close (once, where _http counts)."""
    if not _http.installed() or getattr(aiohttp.ClientSession._request, "_dsa_patched", False):
        return
    from yarl import URL

    session_cls, response_cls = aiohttp.ClientSession, aiohttp.ClientResponse
    request, release, close = session_cls._request, response_cls.release, response_cls.close

    async def counted_request(self, method, str_or_url, *args, **kwargs):
        url = self._build_url(str_or_url) if hasattr(self, "_build_url") else URL(str_or_url)
        if kwargs.get("params"):
            url = url.update_query(kwargs["params"])
        target = _target(url)
        if not _http._is_data(target):
            return await request(self, method, str_or_url, *args, **kwargs)
        mode = _http._counters().follow_block()  # a new block's first request closes the old block's counts first
        if _http.serving() and method.upper() in ("GET", "HEAD"):
            local = _local_response(self, method.upper(), url, kwargs, target, mode)
            if local is not None:
                return local
        _http.begin(target)
        try:
            response = await request(self, method, str_or_url, *args, **kwargs)
        except BaseException:
            _http._end(target, None, failed=True)
            raise
        response._dsa_content = response.content
        _http.responded(target, response, response.status)
        if response.content.is_eof():
            _http.end(response)
        else:
            response.content.on_eof(lambda: _http.end(response))
        return response

    def counted_release(self):
        _http.end(self)
        return release(self)

    def counted_close(self):
        _http.end(self)
        return close(self)

    counted_request._dsa_patched = True
    session_cls._request = counted_request
    response_cls.release = counted_release
    response_cls.close = counted_close
