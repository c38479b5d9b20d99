'use strict';
// `node -r ./loopback.cjs ...`: every TCP server this process starts listens on 127.0.0.1 only.
//
// The peers under test (@modelcontextprotocol/server-everything, the conformance suite's scripted
// servers) call `app.listen(PORT)`, which binds every interface. Tests must reach nothing but
// loopback, so this preload rewrites the address of every TCP listen: net.Server#listen, and so
// http.Server#listen, which inherits it, whatever host (or none) the caller gave.
//
// It hooks net.Server#_listen2, the step that binds once the address is known, rather than
// wrapping #listen with a `host` option: a host makes Node resolve it asynchronously, and callers
// that read `server.address()` right after `listen(0)` (the conformance suite does) would break.
// Unix sockets, pipes and inherited handles or file descriptors are left alone.
const net = require('node:net');

const LOOPBACK = '127.0.0.1';
const bind = net.Server.prototype._listen2;
if (typeof bind !== 'function') {
  throw new Error('loopback.cjs: this Node has no net.Server#_listen2; cannot keep servers on loopback');
}

net.Server.prototype._listen2 = function listenOnLoopback(address, port, addressType, backlog, fd, flags) {
  const tcp = (addressType === 4 || addressType === 6) && typeof port === 'number' && port >= 0;
  const inherited = typeof fd === 'number' && fd >= 0;
  if (tcp && !inherited) {
    return bind.call(this, LOOPBACK, port, 4, backlog, fd, flags);
  }
  return bind.call(this, address, port, addressType, backlog, fd, flags);
};
