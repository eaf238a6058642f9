"""Safe XML parsing shared by the MJCF and URDF loaders.

No entity expansion, no DTD loading, no network: a scene file is data, and
a document that declares entities is refused outright, so nothing from the
local file system can leak into a model or an error message.
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from rigidsim.errors import InputError
from rigidsim.loaders import inputs

_PARSER_KW = dict(resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
                  remove_comments=True, remove_pis=True, huge_tree=False)


def parse_xml(path: str | Path) -> etree._Element:
    """Parse an XML file and return its root element, or raise InputError naming file and line."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"file not found: {p}")
    if p.is_dir():
        raise InputError(f"{p} is a directory, expected an MJCF (.xml) or URDF (.urdf) file")
    try:
        data = inputs.read_bytes(p)
    except OSError as e:
        raise InputError(f"cannot read {p}: {e.strerror}") from None
    return parse_xml_bytes(data, str(p))


def parse_xml_bytes(data: bytes, filename: str) -> etree._Element:
    parser = etree.XMLParser(**_PARSER_KW)
    try:
        tree = etree.fromstring(data, parser=parser, base_url=filename).getroottree()
    except etree.XMLSyntaxError as e:
        line = e.lineno if e.lineno else "?"
        msg = str(e.msg) if getattr(e, "msg", None) else str(e)
        raise InputError(f"malformed XML: {msg}", where=f"{filename}:{line}") from None
    dt = tree.docinfo
    if dt.internalDTD is not None or dt.externalDTD is not None or dt.system_url or dt.public_id or b"<!ENTITY" in data:
        raise InputError("XML document type declarations and entities are not allowed in scene files "
                         "(they could pull in other files); remove the <!DOCTYPE ...> block",
                         where=f"{filename}:1")
    root = tree.getroot()
    for el in root.iter():
        if isinstance(el, etree._Entity):
            raise InputError(f"XML entity '&{el.name};' is not allowed in scene files",
                             where=f"{filename}:{el.sourceline}")
    return root
