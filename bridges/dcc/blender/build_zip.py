"""Build the installable add-on: entelechy_blender.zip, holding the add-on and the client it uses.

    python3 bridges/dcc/blender/build_zip.py [OUT.zip]      # default: bridges/dcc/blender/entelechy_blender.zip

Then in Blender: Edit > Preferences > Add-ons > Install..., choose the zip, and tick "Interface: Entelechy".
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ADDON = HERE / "entelechy_blender"
CLIENT = HERE.parent / "entelechy_client.py"


def build(out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(ADDON.glob("*.py")):
            z.write(path, f"entelechy_blender/{path.name}")
        z.write(CLIENT, "entelechy_blender/entelechy_client.py")
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "entelechy_blender.zip"
    print(build(target))
