"""A table's columns read as COLUMN_TYPES says, whatever pandas would infer from the file: an
optional axis empty in every row, digits in a text column, a baseline without a seed, in both
pandas string modes (issue 49)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from xlt.core.errors import XltError
from xlt.core.tables import read_table

HEADER = "family,run_id,model,size,sentences_seen,seed,freeze_depth,trained,lang,metric,value"


def write(tmp_path, rows, summary=None):
    path = tmp_path / "fam.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    if summary is not None:
        (tmp_path / "fam_summary.csv").write_text("\n".join([HEADER, *summary]) + "\n")
    return path


def test_columns_read_as_their_types(tmp_path, string_mode):
    table = read_table(
        write(tmp_path, ["fam,r1,m,20,,1,-1,True,qaa,accuracy,0.5", "fam,r0,m,40,,,,False,qaa,accuracy,0.25"])
    )
    text = pd.Series(dtype=str).dtype  # the mode's string dtype: str, or object with it off
    assert table["sentences_seen"].dtype == "float64" and table["sentences_seen"].isna().all()
    assert table["size"].dtype == text and list(table["size"]) == ["20", "40"]  # digits stay text
    assert table["seed"].dtype == "float64" and np.isnan(table.loc[table.run_id == "r0", "seed"]).all()
    assert table["trained"].dtype == bool and list(table["trained"]) == [True, False]
    assert table["lang"].dtype == text and table["value"].dtype == "float64"


def test_a_complete_integer_column_is_int64_and_the_summary_join_keeps_the_types(tmp_path, string_mode):
    rows, summary = ["fam,r1,m,all,,1,-1,True,qaa,accuracy,0.5"], ["fam,r1,m,all,,1,-1,,avg,accuracy,0.5"]
    path = write(tmp_path, rows, summary=summary)
    table = read_table(path)
    assert table["seed"].dtype == "int64" and table["freeze_depth"].dtype == "int64"
    assert table["trained"].dtype == object and table["trained"].isna().sum() == 1  # the summary row has none
    assert table["sentences_seen"].dtype == "float64"
    assert list(table["lang"]) == ["avg", "qaa"]  # joined in the aggregated order


def test_a_value_of_the_wrong_type_names_file_column_and_value(tmp_path):
    path = write(tmp_path, ["fam,r1,m,20,many,1,-1,True,qaa,accuracy,0.5"])
    with pytest.raises(XltError, match=r"fam\.csv: column sentences_seen holds 'many' where a number belongs"):
        read_table(path)
    path = write(tmp_path, ["fam,r1,m,20,,1,-1,yes,qaa,accuracy,0.5"])
    with pytest.raises(XltError, match="column trained holds 'yes' where True or False belongs"):
        read_table(path)
