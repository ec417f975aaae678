"""The codec layer (layer 2): the bytes and JSON that cross a door, turned into records and back.

* :mod:`memex.codec.jsonfmt` — JSON text with JavaScript number printing;
* :mod:`memex.codec.adapter` — a wire command (mapping or JSON text) to its typed
  record by its ``type`` tag, and back;
* :mod:`memex.codec.envelope` — event envelopes;
* :mod:`memex.codec.decoding` — strict decoding of untrusted input (size,
  depth and number screens, then typed records);
* :mod:`memex.codec.serialization` — the wire format of a whole graph and the
  snapshot encoding of the three states. It builds states, so it sits above
  :mod:`memex.state` in the layers contract while the rest of the package sits below.
"""
