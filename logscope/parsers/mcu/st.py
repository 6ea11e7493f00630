"""ST X-CUBE-AI / ST Edge AI Core reports: summary figures, model tables (v1, v5), C-arrays and C-layers
(joined into buffer lifetimes), memory pools, target summaries and N6 memory regions."""

from __future__ import annotations

from logscope.parsers.grammar import Fields
from logscope.parsers.mcu.state import _ST_BYTES, _ST_TERMS, _int, _Run, cells_by_columns, to_bytes
from logscope.parsers.mcu.vela import Vela
from logscope.parsers.table import layout_from_header

# The C-arrays table (`c_id  name (*_array)  item/size  domain/mem-pool  c-type  comment`): a cell's kind.
_CARRAY_KINDS = {
    "c_id": r"\d+",
    "name (*_array)": r"\S+",
    "item/size": r"\d+/\d+",
    "domain/mem-pool": r"\w+/\S+",
    "c-type": r"(?:const )?\w+",
}


class St(Vela):
    """Handlers of the ST report terminals (`ST_*` in `grammars/mcu.lark`)."""

    def _st_banner(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        run.figures["tool_version"] = (
            f"ST Edge AI Core {f['edge']}" if f["edge"] else f"X-CUBE-AI {f['ai']} (tools {f['tools']})"
        )

    def _st_summary_title(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.table = "st_summary"

    def _st_kv(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        key, value = f["key"], (f["value"] or "").strip()
        if key in ("model_name", "model name") and value:
            run.figures.setdefault("model_name", value)

    def _st_io(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        m = _ST_BYTES.search(f["value"] or "")
        if m is not None:
            unit = "B" if m["unit"] == "Bytes" else m["unit"]
            self._arena(
                run,
                "st-report",
                number,
                category=line.split(":")[0].strip(),
                region="io",
                used_bytes=to_bytes(m["value"], unit),
            )

    def _st_memory(self, f: Fields, line: str, number: int) -> None:
        key = f["key"] or ""
        run = self._run(number)
        value = _int(f["value"])
        region = {"weights (ro)": "flash", "activations (rw)": "ram", "ram (total)": "ram"}[key]
        self._arena(run, "st-report", number, category=key, region=region, used_bytes=value)
        if key == "ram (total)":
            self._report(run, "ram (total)", value, number)
            terms = _ST_TERMS.search(f["rest"] or "")
            if terms is not None:  # `= activations + input + output`, exact where the KiB figures round
                for name, group in (("ram (total): input", "inp"), ("ram (total): output", "out")):
                    self._arena(
                        run, "st-report", number, category=name, region="ram", used_bytes=_int(terms[group])
                    )

    def _st_skip_title(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.skipping = True
        self.table = None

    def _st_v5_row(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        if f["id"] is not None:
            run.st_v5_last_id = int(f["id"])
        # Columns after the shape: `param #  connected to  macc  rom`, any of them blank. The connected-to
        # names are the non-numeric tokens; numbers before them are the params, after them macc then rom.
        tokens = (f["tail"] or "").split()
        first_name = next((i for i, token in enumerate(tokens) if _int(token) is None), len(tokens))
        after = [_int(token) for token in tokens[first_name:] if _int(token) is not None]
        if first_name == len(tokens):  # no connected-to column: nothing tells params from macc
            after = []
        self.rows["mcu_layers"].append(
            {
                "run_index": run.index,
                "source": "st-model",
                "layer_index": run.st_v5_last_id,
                "name": f["name"],
                "op_type": f["type"],
                "output_shape": f"({f['shape']})",
                "macs": after[0] if len(after) > 0 else None,
                "rom_bytes": after[1] if len(after) > 1 else None,
                "detail": " ".join(t for t in tokens[first_name:] if _int(t) is None) or None,
                "line": number,
            }
        )

    def _st_v1_row(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        left, _, right = (f["tail"] or "").partition("|")
        rom = macc = None
        connected: list[str] = []
        for token in left.split():
            if "/" in token and token.replace(",", "").replace("/", "").isdecimal():
                rom = _int(token.split("/")[1])  # `param/size`: the size in bytes
            elif _int(token) is not None:
                macc = _int(token)
            else:
                connected.append(token)
        right_tokens = right.split()
        c_type = right_tokens[-1] if right_tokens and right_tokens[-1][0] not in "+-" else None
        self.rows["mcu_layers"].append(
            {
                "run_index": run.index,
                "source": "st-model",
                "layer_index": int(f["id"] or 0),
                "name": f["name"],
                "op_type": (f["type"] or "").strip() or None,
                "output_shape": f["shape"],
                "macs": macc,
                "rom_bytes": rom,
                "detail": c_type,
                "line": number,
            }
        )

    def _st_pool_row(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        self._arena(
            run,
            "st-report",
            number,
            category="memory pool",
            region=f["name"],
            used_bytes=to_bytes(f["used"], f["unit"]) if f["used"] else None,
            percent=float(f["pct"]) if f["pct"] else None,
            count=_int(f["buffers"]),
            count_unit="buffers",
        )

    def _st_warning(self, f: Fields, line: str, number: int) -> None:
        self._run(number)

    def _st_carrays_title(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.table = "st_carrays"

    def _st_carray_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "st_carrays":
            return self._outside()
        self._carray(number, int(f["id"] or 0), f["name"], int(f["size"] or 0), f["domain"], f["pool"])

    def _carray(
        self, number: int, buffer_id: int, name: str | None, size: int, domain: str | None, pool: str | None
    ) -> None:
        run = self._run(number)
        row = {
            "run_index": run.index,
            "buffer_id": buffer_id,
            "name": name,
            "size_bytes": size,
            "domain": domain,
            "mem_pool": pool,
            "source": "st-c-array",
            "line": number,
        }
        run.st_arrays[name or ""] = row
        self.rows["buffers"].append(row)

    def st_rule(self, line: str) -> None:
        """The dashes under the C-arrays header give its column starts (the shared table reader's layout)."""
        if self.table != "st_carrays" or self.st_header is None:
            return
        layout = layout_from_header(
            self.st_header, kinds=_CARRAY_KINDS, nullable=("c-type", "comment"), rule=line
        )
        self.st_layout = layout if layout.starts is not None and layout.names[0] == "c_id" else None

    def st_layout_row(self, line: str, number: int) -> bool:
        """A C-arrays line the row terminal missed (a cell empty, a row cut short), cut at the column starts.

        False when it does not fit (a figure missing or possibly cut): the caller keeps it as unparsed.
        """
        cells = cells_by_columns(self.st_layout, line) if self.st_layout is not None else None
        if cells is None:
            return False
        buffer_id, name, item_size, domain_pool = cells[:4]
        _items, _, size = (item_size or "").partition("/")
        domain, _, pool = (domain_pool or "").partition("/")
        self._carray(number, int(buffer_id or 0), name, int(size), domain, pool)
        return True

    def _st_clayers_title(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.table = "st_clayers"

    def _st_clayer_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "st_clayers":
            return self._outside()
        run = self._run(number)
        layer = {
            "run_index": run.index,
            "source": "st-c-layer",
            "layer_index": int(f["id"] or 0),
            "name": f["name"],
            "op_type": f["type"],
            "macs": int(f["macc"] or 0),
            "rom_bytes": int(f["rom"] or 0),
            "detail": f"m_id {f['mid']}",
            "line": number,
            "_tensors": [(f["role"], f["array"])],
        }
        run.st_layers.append(layer)
        self.rows["mcu_layers"].append(layer)
        self.open_layer = layer

    def _st_clayer_tensor(self, f: Fields, line: str, number: int) -> None:
        if self.open_layer is None:
            return self._outside()
        self.open_layer["_tensors"].append((f["role"], f["array"]))

    def _st_target_title(self, f: Fields, line: str, number: int) -> None:
        self._run(number)
        self.table = "st_target"

    def _st_target_row(self, f: Fields, line: str, number: int) -> None:
        if self.table != "st_target":
            return self._outside()
        run = self._run(number)
        label = "runtime" if f["row"] == "RT total" else "total incl. runtime"
        self._arena(
            run, "st-report", number, category=f"flash {label}", region="flash", used_bytes=_int(f["flash"])
        )
        self._arena(
            run, "st-report", number, category=f"ram {label}", region="ram", used_bytes=_int(f["ram"])
        )

    def _st_n6_region(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        self._arena(
            run,
            "st-report",
            number,
            category="memory region",
            region=f["region"],
            used_bytes=to_bytes(f["used"], f["used_unit"]),
            capacity_bytes=to_bytes(f["cap"], f["cap_unit"]),
            percent=float(f["pct"] or 0),
        )

    def _st_n6_total(self, f: Fields, line: str, number: int) -> None:
        run = self._run(number)
        self._arena(
            run,
            "st-report",
            number,
            category="memory regions total",
            used_bytes=to_bytes(f["total"], f["total_unit"]),
        )

    def _join_st(self, run: _Run) -> None:
        """ST C-layers name the C-arrays they read and write: a buffer lives from its first to its last layer.

        Only activations-domain arrays take RAM; with each array used by consecutive layers (as in [11]) the
        live sum per layer equals the layer's I/O/scratch working set (layer 0 of [11]: 784 + 2848 + 128
        = 3760 B, the report's `activations (rw)`).
        """
        for position, layer in enumerate(run.st_layers):
            working = 0
            for _role, name in layer["_tensors"]:
                array = run.st_arrays.get(name)
                if array is None or array.get("domain") != "activations":
                    continue
                working += array["size_bytes"]
                array["first_op"] = position if array.get("first_op") is None else array["first_op"]
                array["last_op"] = position
            layer["working_set_bytes"] = working
