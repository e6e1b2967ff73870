"""Write the malformed-input corpus that tests/test_data_bad_inputs.py checks.

Every file is committed; this script is how they were made (``python3 make_corpus.py [dir]``),
and the test regenerates the corpus into a temporary folder to check that the committed text
files are byte-identical to what this script writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

HEADER = "ID;Question;Answer;Ref_Answer;Model;Human_Accuracy\n"
GOOD_ROWS = (
    "1;Ki írta a Toldit?;Arany János;Arany János;model-a;5\n"
    "2;Melyik folyó a leghosszabb?;Tisza;Duna;model-b;0\n"
)

TEXT_FILES: dict[str, bytes] = {
    # --- files that must load ---
    "ok_hungarian.csv": (HEADER + GOOD_ROWS).encode(),
    "ok_bom.csv": b"\xef\xbb\xbf" + (HEADER + GOOD_ROWS).encode(),
    "ok_cp1250.csv": (HEADER + "1;Mi ez: árvíztűrő tükörfúrógép?;Őz;Őzike;model-a;3\n").encode(
        "cp1250"
    ),
    "ok_embedded_newline.csv": (
        HEADER
        + '1;Kérdés;"Első sor; még mindig\n17,5\nharmadik ""idézett"" sor";Ref;model-a;5\n'
        + "2;Másik;Egyszerű;Ref;model-b;0\n"
    ).encode(),
    "ok_comma.csv": b'ID,Question,Answer,Ref_Answer,Score\n1,Q one,"A, with comma",R,"4,5"\n',
    "ok_tab.tsv": b'ID\tQuestion\tAnswer\tRef_Answer\n1\tQ "quoted" text\tA\tR\n',
    "ok_aliases.csv": (
        "id;Riddle in HUN;model answer;Reference answer;Justification2;ideal_reasoning_text\n"
        "7;Talány;Válasz;Referencia;Indoklás;Ideális indoklás\n"
    ).encode(),
    "ok_decimal_comma.csv": (
        HEADER.replace("Human_Accuracy", "Mean") + "1;Q;A;R;m;3,5\n2;Q;A;R;m;4\n"
    ).encode(),
    "ok_trailing_empty_columns.csv": (
        b"ID;Question;Answer;Ref_Answer;;;\n1;Q;A;R;;;\n;;;;;;\n2;Q2;A2;R2;;;\n"
    ),
    "ok_leading_zero_ids.csv": (
        b"ID;Question;Answer;Ref_Answer;Code\n017;Q;A;R;007\n17;Q;A;R;12\n 0017 ;Q;A;R;3\n"
    ),
    "ok_utf16_bom.csv": (HEADER + GOOD_ROWS).encode("utf-16"),
    # --- files that must fail with one exact message ---
    "utf16_without_bom.csv": (HEADER + GOOD_ROWS).encode("utf-16-le"),
    "wrong_separator.csv": b"ID|Question|Answer|Ref_Answer\n1|Q|A|R\n",
    "forced_wrong_separator.csv": (HEADER + GOOD_ROWS).encode(),
    "missing_column.csv": b"ID;Question;Answer;Model\n1;Q;A;m\n",
    "duplicate_id.csv": (HEADER + GOOD_ROWS + "1;Harmadik;Válasz;Ref;model-c;3\n").encode(),
    "duplicate_id_after_strip.csv": b"ID;Question;Answer;Ref_Answer\n17;Q;A;R\n 17 ;Q;A;R\n",
    "empty_id.csv": (HEADER + "1;Q;A;R;m;5\n   ;Q;A;R;m;5\n").encode(),
    "ragged_rows.csv": (HEADER + "1;Q;A;R;m;5\n2;Q;A; with; a semicolon;R;m;5\n").encode(),
    "too_few_fields.csv": (HEADER + "1;Q;A;R;m;5\n2;Q;A\n").encode(),
    "empty.csv": b"",
    "blank_lines_only.csv": b"\n\r\n  \n",
    "header_only.csv": HEADER.encode(),
    "undecodable.csv": b"ID;Question;Answer;Ref_Answer\n1;Q;A;R\n2;\x81\x98 bad;A;R\n",
    "cp1250_forced_utf8.csv": (HEADER + "1;Tükörfúrógép;Ő;Ő;m;5\n").encode("cp1250"),
    "alias_collision.csv": b"ID;Question;Answer;Ref_Answer;Response\n1;Q;A;R;B\n",
    "duplicate_header.csv": b"ID;Question;Answer;Ref_Answer;Model;Model\n1;Q;A;R;m;n\n",
    "empty_required_cell.csv": (HEADER + "1;Q;A;R;m;5\n2;Q;  ;R;m;5\n").encode(),
    "unclosed_quote.csv": (HEADER + '1;Q;"never closed;R;m;5\n2;Q;A;R;m;5\n').encode(),
    "values_without_header.csv": b"ID;Question;Answer;Ref_Answer;\n1;Q;A;R;stray\n",
    "not_really.xlsx": b"ID;Question\n1;Q\n",
    "unsupported.json": b'[{"ID": 1}]\n',
}


def write_workbooks(folder: Path) -> None:
    """Write the xlsx cases (openpyxl output carries timestamps, so bytes vary per run)."""
    from openpyxl import Workbook

    book = Workbook()
    notes = book.active
    assert notes is not None
    notes.title = "Notes"
    notes.append(["This sheet is not the data."])
    items = book.create_sheet("Items")
    items.append(["ID", "Riddle in HUN", "Answer", "Reference answer", "Human_Accuracy"])
    items.append(["017", "Eme vöröskeresztes gömb...", "Unicum", "Unicum", 5])
    items.append([18, "Kócos kis jószág...", "Puli; a terelőkutya", "Puli", 3])
    items.append([None, None, None, None, None])
    book.save(folder / "ok_second_sheet.xlsx")
    book.save(folder / "wrong_sheet.xlsx")


def make_corpus(folder: Path) -> None:
    """Write every corpus file into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in TEXT_FILES.items():
        (folder / name).write_bytes(content)
    write_workbooks(folder)


if __name__ == "__main__":
    make_corpus(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent)
