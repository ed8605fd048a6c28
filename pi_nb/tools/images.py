"""Image sniffing and preparation for the read tool (Pi's ``utils/mime.ts``, ``image-process.ts``).

The MIME type comes from the file's first bytes, never from its name: a PNG saved as ``.txt`` is
an image, a text file named ``.png`` is text. Supported: JPEG (not JPEG-LS, ``FF D8 FF F7``), PNG
(a real ``IHDR`` header; animated PNGs with an ``acTL`` chunk before ``IDAT`` are not images),
GIF, WebP, and BMP with a plausible header.

What is sent to the model (Pi's ``processImage``): PNG/JPEG/GIF/WebP as they are; BMP converted
to PNG with the hint ``[Image converted from image/bmp to image/png.]``; with auto-resize on
(the default), images larger than 2000x2000 pixels or 4.5 MB of base64 are scaled down with the
note ``[Image: original WxH, displayed at wxh. Multiply coordinates by S to map to original
image.]``. Pi uses the Photon WASM library for decoding and encoding; pi_nb uses Pillow, loaded
only when an image actually needs decoding. The *texts* are Pi's; the bytes of a converted or
resized image differ from Photon's encoder output (same pixels, different PNG compression).
Without Pillow, conversion and resizing fail with Pi's own failure notices.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from typing import Any

from pi_nb._fs import open_regular
from pi_nb._js import js_round, js_to_fixed

__all__ = ["detect_supported_image_mime_type", "detect_supported_image_mime_type_from_file", "process_image"]

IMAGE_TYPE_SNIFF_BYTES = 4100
PNG_SIGNATURE = bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])

DEFAULT_MAX_WIDTH = 2000
DEFAULT_MAX_HEIGHT = 2000
DEFAULT_MAX_IMAGE_BYTES = 4.5 * 1024 * 1024  # of base64 payload, below Anthropic's 5 MB limit
DEFAULT_JPEG_QUALITY = 80

CONVERT_FAILED = "[Image omitted: could not be converted to a supported inline image format.]"
RESIZE_FAILED = "[Image omitted: could not be resized below the inline image size limit.]"


def _u32be(b: bytes, o: int) -> int:
    return int.from_bytes(b[o : o + 4].ljust(4, b"\0"), "big")


def _u32le(b: bytes, o: int) -> int:
    return int.from_bytes(b[o : o + 4].ljust(4, b"\0"), "little")


def _u16le(b: bytes, o: int) -> int:
    return int.from_bytes(b[o : o + 2].ljust(2, b"\0"), "little")


def _ascii_at(b: bytes, o: int, text: str) -> bool:
    return len(b) >= o + len(text) and b[o : o + len(text)] == text.encode("ascii")


def _is_png(b: bytes) -> bool:
    return len(b) >= 16 and _u32be(b, 8) == 13 and _ascii_at(b, 12, "IHDR")


def _is_animated_png(b: bytes) -> bool:
    offset = len(PNG_SIGNATURE)
    while offset + 8 <= len(b):
        length = _u32be(b, offset)
        if _ascii_at(b, offset + 4, "acTL"):
            return True
        if _ascii_at(b, offset + 4, "IDAT"):
            return False
        nxt = offset + 8 + length + 4
        if nxt <= offset or nxt > len(b):
            return False
        offset = nxt
    return False


def _is_bmp(b: bytes) -> bool:
    if len(b) < 26:
        return False
    declared = _u32le(b, 2)
    pixel_offset = _u32le(b, 10)
    dib = _u32le(b, 14)
    if declared != 0 and declared < 26:
        return False
    if pixel_offset < 14 + dib:
        return False
    if declared != 0 and pixel_offset >= declared:
        return False
    if dib == 12:
        planes, bpp = _u16le(b, 22), _u16le(b, 24)
    elif 40 <= dib <= 124:
        if len(b) < 30:
            return False
        planes, bpp = _u16le(b, 26), _u16le(b, 28)
    else:
        return False
    return planes == 1 and bpp in (1, 4, 8, 16, 24, 32)


def detect_supported_image_mime_type(data: bytes) -> str | None:
    """Pi's ``detectSupportedImageMimeType``: the image MIME type of these leading bytes, or None."""
    if data[:3] == b"\xff\xd8\xff":
        return None if len(data) > 3 and data[3] == 0xF7 else "image/jpeg"
    if data[:8] == PNG_SIGNATURE:
        return "image/png" if _is_png(data) and not _is_animated_png(data) else None
    if _ascii_at(data, 0, "GIF"):
        return "image/gif"
    if _ascii_at(data, 0, "RIFF") and _ascii_at(data, 8, "WEBP"):
        return "image/webp"
    if _ascii_at(data, 0, "BM") and _is_bmp(data):
        return "image/bmp"
    return None


def detect_supported_image_mime_type_from_file(path: str) -> str | None:
    """Sniff the first 4100 bytes of a file (Pi's ``detectSupportedImageMimeTypeFromFile``)."""
    with open_regular(path) as f:  # a FIFO would block the sniff, a device is no image
        return detect_supported_image_mime_type(f.read(IMAGE_TYPE_SNIFF_BYTES))


@dataclass(frozen=True)
class ProcessedImage:
    """``processImage``'s answer: ``ok`` with base64 data, MIME type and hints, or a failure message."""

    ok: bool
    data: str = ""
    mime_type: str = ""
    hints: tuple[str, ...] = ()
    message: str = ""


def _pillow() -> Any:
    try:
        from PIL import Image, ImageOps
    except ImportError:  # pragma: no cover - Pillow ships with matplotlib, a dependency
        return None
    return Image, ImageOps


def _normalize_mime(mime: str) -> str | None:
    base = mime.split(";")[0].strip().lower()
    return {
        "image/png": "image/png",
        "image/jpeg": "image/jpeg",
        "image/jpg": "image/jpeg",
        "image/gif": "image/gif",
        "image/webp": "image/webp",
    }.get(base)


def _open(data: bytes) -> Any:
    lib = _pillow()
    if lib is None:
        return None
    image_mod, ops = lib
    try:
        img = image_mod.open(io.BytesIO(data))
        img.load()
        return ops.exif_transpose(img)
    except Exception:
        return None


def _png_bytes(img: Any) -> bytes:
    out = io.BytesIO()
    if img.mode not in ("RGB", "RGBA"):
        img = img.convert("RGBA")
    img.save(out, format="PNG")
    return out.getvalue()


def _jpeg_bytes(img: Any, quality: int) -> bytes:
    out = io.BytesIO()
    img.convert("RGB").save(out, format="JPEG", quality=quality)
    return out.getvalue()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _resize(data: bytes, mime: str) -> tuple[str, str, int, int, int, int, bool] | None:
    """Pi's ``resizeImage`` (defaults): None when the image cannot be decoded or made small enough."""
    img = _open(data)
    if img is None:
        return None
    lib = _pillow()
    assert lib is not None
    image_mod = lib[0]
    ow, oh = img.size
    input_b64 = math.ceil(len(data) / 3) * 4
    if ow <= DEFAULT_MAX_WIDTH and oh <= DEFAULT_MAX_HEIGHT and input_b64 < DEFAULT_MAX_IMAGE_BYTES:
        return _b64(data), mime, ow, oh, ow, oh, False
    tw, th = ow, oh
    if tw > DEFAULT_MAX_WIDTH:
        th = _js_round(th * DEFAULT_MAX_WIDTH / tw)
        tw = DEFAULT_MAX_WIDTH
    if th > DEFAULT_MAX_HEIGHT:
        tw = _js_round(tw * DEFAULT_MAX_HEIGHT / th)
        th = DEFAULT_MAX_HEIGHT
    qualities = list(dict.fromkeys([DEFAULT_JPEG_QUALITY, 85, 70, 55, 40]))
    while True:
        resized = img.resize((tw, th), image_mod.Resampling.LANCZOS)
        candidates = [(_b64(_png_bytes(resized)), "image/png")]
        candidates += [(_b64(_jpeg_bytes(resized, q)), "image/jpeg") for q in qualities]
        for b64data, cand_mime in candidates:
            if len(b64data) < DEFAULT_MAX_IMAGE_BYTES:
                return b64data, cand_mime, ow, oh, tw, th, True
        if tw == 1 and th == 1:
            return None
        nw = 1 if tw == 1 else max(1, math.floor(tw * 0.75))
        nh = 1 if th == 1 else max(1, math.floor(th * 0.75))
        if nw == tw and nh == th:
            return None
        tw, th = nw, nh


_js_round = js_round


def process_image(data: bytes, mime_type: str, *, auto_resize_images: bool = True) -> ProcessedImage:
    """Pi's ``processImage``: normalise to an inline format, then (optionally) fit the size limits."""
    normalized = _normalize_mime(mime_type)
    converted_from: str | None = None
    if normalized is None:
        img = _open(data)
        if img is None:
            return ProcessedImage(ok=False, message=CONVERT_FAILED)
        data = _png_bytes(img)
        converted_from = mime_type.split(";")[0].strip().lower()
        normalized = "image/png"
    hints: list[str] = []
    if auto_resize_images:
        resized = _resize(data, normalized)
        if resized is None:
            return ProcessedImage(ok=False, message=RESIZE_FAILED)
        b64data, out_mime, ow, oh, w, h, was_resized = resized
        if converted_from and converted_from != out_mime:
            hints.append(f"[Image converted from {converted_from} to {out_mime}.]")
        if was_resized:
            scale = js_to_fixed(ow / w, 2)
            hints.append(
                f"[Image: original {ow}x{oh}, displayed at {w}x{h}. "
                f"Multiply coordinates by {scale} to map to original image.]"
            )
        return ProcessedImage(ok=True, data=b64data, mime_type=out_mime, hints=tuple(hints))
    if converted_from and converted_from != normalized:
        hints.append(f"[Image converted from {converted_from} to {normalized}.]")
    return ProcessedImage(ok=True, data=_b64(data), mime_type=normalized, hints=tuple(hints))
