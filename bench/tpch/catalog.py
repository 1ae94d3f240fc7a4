"""The TPC-H queries of bench/tpch/queries.py, q7.py, q12.py, q19.py (and Q4, Q10,
Q14, Q13, Q18, Q1, Q17, Q11, Q16, Q22 and Q21, on the shared tables only: their `run` is None) as a catalogue: each one's etchpy
function, its SQL (DuckDB or SQLite dialect), three sets of substitution
parameters, and the comparison of its rows with a database's.

    QUERIES["Q5"].run(tries, **params)   one warm query: {column: numpy array}
    QUERIES["Q5"].params                 three sets of TPC-H substitution parameters
    QUERIES["Q5"].sql(params, dialect)   the same query in SQL ("duckdb" or "sqlite")
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from bench.tpch.q7 import q7
from bench.tpch.q12 import q12
from bench.tpch.q19 import CONTAINERS, q19
from bench.tpch.queries import q3, q5, q6, q9

SQL = {
    "Q5": """
SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM customer, orders, lineitem, supplier, nation, region
WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey
  AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey
  AND n_regionkey = r_regionkey AND r_name = '{region}'
  AND o_orderdate >= {D}'{date}' AND o_orderdate < {D}'{date1}'
GROUP BY n_name ORDER BY revenue DESC""",
    "Q9": """
SELECT nation, o_year, sum(amount) AS sum_profit FROM (
  SELECT n_name AS nation, {year} AS o_year,
         l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity AS amount
  FROM part, supplier, lineitem, partsupp, orders, nation
  WHERE s_suppkey = l_suppkey AND ps_suppkey = l_suppkey AND ps_partkey = l_partkey
    AND p_partkey = l_partkey AND o_orderkey = l_orderkey AND s_nationkey = n_nationkey
    AND p_name LIKE '%{color}%') AS profit
GROUP BY nation, o_year ORDER BY nation, o_year DESC""",
    "Q3": """
SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate,
       o_shippriority
FROM customer, orders, lineitem
WHERE c_mktsegment = '{segment}' AND c_custkey = o_custkey AND l_orderkey = o_orderkey
  AND o_orderdate < {D}'{date}' AND l_shipdate > {D}'{date}'
GROUP BY l_orderkey, o_orderdate, o_shippriority
ORDER BY revenue DESC, o_orderdate LIMIT 10""",
    "Q6": """
SELECT sum(l_extendedprice * l_discount) AS revenue
FROM lineitem
WHERE l_shipdate >= {D}'{date}' AND l_shipdate < {D}'{date1}'
  AND l_discount BETWEEN {discount} - 0.01 AND {discount} + 0.01
  AND l_quantity < {quantity}""",
    "Q7": """
SELECT supp_nation, cust_nation, l_year, sum(volume) AS revenue FROM (
  SELECT n1.n_name AS supp_nation, n2.n_name AS cust_nation, {lyear} AS l_year,
         l_extendedprice * (1 - l_discount) AS volume
  FROM supplier, lineitem, orders, customer, nation n1, nation n2
  WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND c_custkey = o_custkey
    AND s_nationkey = n1.n_nationkey AND c_nationkey = n2.n_nationkey
    AND ((n1.n_name = '{nation1}' AND n2.n_name = '{nation2}')
         OR (n1.n_name = '{nation2}' AND n2.n_name = '{nation1}'))
    AND l_shipdate BETWEEN {D}'1995-01-01' AND {D}'1996-12-31') AS shipping
GROUP BY supp_nation, cust_nation, l_year ORDER BY supp_nation, cust_nation, l_year""",
    "Q12": """
SELECT l_shipmode,
  sum(CASE WHEN o_orderpriority = '1-URGENT' OR o_orderpriority = '2-HIGH'
      THEN 1 ELSE 0 END) AS high_line_count,
  sum(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH'
      THEN 1 ELSE 0 END) AS low_line_count
FROM orders, lineitem
WHERE o_orderkey = l_orderkey AND l_shipmode IN ('{mode1}', '{mode2}')
  AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate
  AND l_receiptdate >= {D}'{date}' AND l_receiptdate < {D}'{date1}'
GROUP BY l_shipmode ORDER BY l_shipmode""",
    "Q4": """
SELECT o_orderpriority, count(*) AS order_count FROM orders
WHERE o_orderdate >= {D}'{date}' AND o_orderdate < {D}'{date3}'
  AND EXISTS (SELECT * FROM lineitem
              WHERE l_orderkey = o_orderkey AND l_commitdate < l_receiptdate)
GROUP BY o_orderpriority ORDER BY o_orderpriority""",
    "Q10": """
SELECT c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) AS revenue, c_acctbal,
       n_name, c_address, c_phone, c_comment
FROM customer, orders, lineitem, nation
WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey
  AND o_orderdate >= {D}'{date}' AND o_orderdate < {D}'{date3}'
  AND l_returnflag = 'R' AND c_nationkey = n_nationkey
GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
ORDER BY revenue DESC LIMIT 20""",
    "Q14": """
SELECT 100.00 * sum(CASE WHEN p_type LIKE 'PROMO%' THEN l_extendedprice * (1 - l_discount)
                    ELSE 0 END) / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue
FROM lineitem, part
WHERE l_partkey = p_partkey
  AND l_shipdate >= {D}'{date}' AND l_shipdate < {D}'{date1m}'""",
    "Q13": """
SELECT c_count, count(*) AS custdist FROM (
  SELECT c_custkey, count(o_orderkey) AS c_count
  FROM customer LEFT OUTER JOIN orders
    ON c_custkey = o_custkey AND o_comment NOT LIKE '%{word1}%{word2}%'
  GROUP BY c_custkey) AS c_orders
GROUP BY c_count ORDER BY custdist DESC, c_count DESC""",
    "Q18": """
SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity)
FROM customer, orders, lineitem
WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey
                     HAVING sum(l_quantity) > {quantity})
  AND c_custkey = o_custkey AND o_orderkey = l_orderkey
GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
ORDER BY o_totalprice DESC, o_orderdate LIMIT 100""",
    "Q1": """
SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty,
       sum(l_extendedprice) AS sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
       avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price,
       avg(l_discount) AS avg_disc, count(*) AS count_order
FROM lineitem WHERE l_shipdate <= {D}'{shipped}'
GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus""",
    "Q17": """
SELECT sum(l_extendedprice) / 7.0 AS avg_yearly
FROM lineitem, part
WHERE p_partkey = l_partkey AND p_brand = '{brand}' AND p_container = '{container}'
  AND l_quantity < (SELECT 0.2 * avg(l_quantity) FROM lineitem WHERE l_partkey = p_partkey)""",
    "Q11": """
SELECT ps_partkey, sum(ps_supplycost * ps_availqty) AS value
FROM partsupp, supplier, nation
WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = '{nation}'
GROUP BY ps_partkey HAVING sum(ps_supplycost * ps_availqty) > (
  SELECT sum(ps_supplycost * ps_availqty) * {fraction}
  FROM partsupp, supplier, nation
  WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = '{nation}')
ORDER BY value DESC, ps_partkey""",
    "Q16": """
SELECT p_brand, p_type, p_size, count(DISTINCT ps_suppkey) AS supplier_cnt
FROM partsupp, part
WHERE p_partkey = ps_partkey AND p_brand <> '{brand}' AND p_type NOT LIKE '{type_}%'
  AND p_size IN {sizes}
  AND ps_suppkey NOT IN (SELECT s_suppkey FROM supplier
                         WHERE s_comment LIKE '%Customer%Complaints%')
GROUP BY p_brand, p_type, p_size
ORDER BY supplier_cnt DESC, p_brand, p_type, p_size""",
    "Q22": """
SELECT cntrycode, count(*) AS numcust, sum(c_acctbal) AS totacctbal FROM (
  SELECT substring(c_phone FROM 1 FOR 2) AS cntrycode, c_acctbal FROM customer
  WHERE substring(c_phone FROM 1 FOR 2) IN {codes}
    AND c_acctbal > (SELECT avg(c_acctbal) FROM customer WHERE c_acctbal > 0.00
                     AND substring(c_phone FROM 1 FOR 2) IN {codes})
    AND NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey)) AS custsale
GROUP BY cntrycode ORDER BY cntrycode""",
    "Q21": """
SELECT s_name, count(*) AS numwait
FROM supplier, lineitem l1, orders, nation
WHERE s_suppkey = l1.l_suppkey AND o_orderkey = l1.l_orderkey AND o_orderstatus = 'F'
  AND l1.l_receiptdate > l1.l_commitdate
  AND EXISTS (SELECT * FROM lineitem l2
              WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey)
  AND NOT EXISTS (SELECT * FROM lineitem l3
                  WHERE l3.l_orderkey = l1.l_orderkey AND l3.l_suppkey <> l1.l_suppkey
                    AND l3.l_receiptdate > l3.l_commitdate)
  AND s_nationkey = n_nationkey AND n_name = '{nation}'
GROUP BY s_name ORDER BY numwait DESC, s_name LIMIT 100""",
    "Q19": "SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue\nFROM lineitem, part\n"
           "WHERE " + "\n   OR ".join(f"""(p_partkey = l_partkey AND p_brand = '{{brand{k}}}'
       AND p_container IN ({{containers{k}}})
       AND l_quantity >= {{quantity{k}}} AND l_quantity <= {{quantity{k}}} + 10
       AND p_size BETWEEN 1 AND {size}
       AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON')"""
                                            for k, size in ((1, 5), (2, 10), (3, 15))),
}
DIALECT = {"duckdb": {"D": "DATE ", "year": "extract(year FROM o_orderdate)",
                      "lyear": "extract(year FROM l_shipdate)"},
           "sqlite": {"D": "", "year": "CAST(strftime('%Y', o_orderdate) AS INTEGER)",
                      "lyear": "CAST(strftime('%Y', l_shipdate) AS INTEGER)"}}


@dataclass(frozen=True)
class Query:
    """A query: its etchpy function, its SQL and three substitution parameter sets.
    `columns` names the result columns in SQL's order."""

    name: str
    run: Callable[..., dict]
    params: tuple[dict, ...]
    columns: tuple[str, ...]

    def sql(self, params: dict, dialect: str = "duckdb") -> str:
        extra = {}
        if "date" in params and self.name in ("Q5", "Q6", "Q12"):
            extra["date1"] = f"{int(params['date'][:4]) + 1}{params['date'][4:]}"
        if self.name in ("Q4", "Q10"):       # three months on
            extra["date3"] = str(np.datetime64(params["date"], "M") + 3) + "-01"
        if self.name == "Q14":               # one month on
            extra["date1m"] = str(np.datetime64(params["date"], "M") + 1) + "-01"
        if self.name == "Q1":                # 1998-12-01 minus delta days
            extra["shipped"] = str(np.datetime64("1998-12-01") - int(params["delta"]))
        if self.name == "Q19":
            extra = {f"containers{k}": ", ".join(f"'{c}'" for c in
                                                 params.get(f"containers{k}", CONTAINERS[k - 1]))
                     for k in (1, 2, 3)}
            params = {k: v for k, v in params.items() if not k.startswith("containers")}
        return SQL[self.name].format(**params, **extra, **DIALECT[dialect])


QUERIES = {
    "Q5": Query("Q5", q5, ({"region": "ASIA", "date": "1994-01-01"},
                           {"region": "EUROPE", "date": "1995-01-01"},
                           {"region": "AMERICA", "date": "1997-01-01"}),
                ("n_name", "revenue")),
    "Q9": Query("Q9", q9, ({"color": "green"}, {"color": "blue"}, {"color": "ivory"}),
                ("nation", "o_year", "sum_profit")),
    "Q3": Query("Q3", q3, ({"segment": "BUILDING", "date": "1995-03-15"},
                           {"segment": "AUTOMOBILE", "date": "1995-03-01"},
                           {"segment": "MACHINERY", "date": "1995-03-31"}),
                ("l_orderkey", "revenue", "o_orderdate", "o_shippriority")),
    "Q6": Query("Q6", q6, ({"date": "1994-01-01", "discount": 0.06, "quantity": 24},
                           {"date": "1995-01-01", "discount": 0.05, "quantity": 25},
                           {"date": "1997-01-01", "discount": 0.07, "quantity": 24}),
                ("revenue",)),
    "Q7": Query("Q7", q7, ({"nation1": "FRANCE", "nation2": "GERMANY"},
                           {"nation1": "JAPAN", "nation2": "CHINA"},
                           {"nation1": "BRAZIL", "nation2": "CANADA"}),
                ("supp_nation", "cust_nation", "l_year", "revenue")),
    "Q12": Query("Q12", q12, ({"mode1": "MAIL", "mode2": "SHIP", "date": "1994-01-01"},
                              {"mode1": "AIR", "mode2": "RAIL", "date": "1995-01-01"},
                              {"mode1": "TRUCK", "mode2": "FOB", "date": "1997-01-01"}),
                 ("l_shipmode", "high_line_count", "low_line_count")),
    # the third set makes the clauses overlap: one brand, one quantity range and
    # one container list, the sizes nested (a line passing two clauses counts once)
    "Q19": Query("Q19", q19, ({"brand1": "Brand#12", "brand2": "Brand#23", "brand3": "Brand#34",
                               "quantity1": 1, "quantity2": 10, "quantity3": 20},
                              {"brand1": "Brand#41", "brand2": "Brand#13", "brand3": "Brand#55",
                               "quantity1": 5, "quantity2": 15, "quantity3": 25},
                              {"brand1": "Brand#23", "brand2": "Brand#23", "brand3": "Brand#23",
                               "quantity1": 1, "quantity2": 1, "quantity3": 1,
                               "containers2": CONTAINERS[0], "containers3": CONTAINERS[0]}),
                 ("revenue",)),
}
# Q4 is written on the shared tables only (bench/tpch/tables.py, --load-once --tables)
QUERIES["Q4"] = Query("Q4", None, ({"date": "1993-07-01"}, {"date": "1995-01-01"},
                                   {"date": "1997-04-01"}), ("o_orderpriority", "order_count"))
# Q10 and Q14 too (bench/tpch/q10.py)
QUERIES["Q10"] = Query("Q10", None, ({"date": "1993-10-01"}, {"date": "1994-02-01"},
                                     {"date": "1995-01-01"}),
                       ("c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address",
                        "c_phone", "c_comment"))
QUERIES["Q14"] = Query("Q14", None, ({"date": "1995-09-01"}, {"date": "1993-03-01"},
                                     {"date": "1997-12-01"}), ("promo_revenue",))
# Q13 and Q18 too (bench/tpch/q13.py)
QUERIES["Q13"] = Query("Q13", None, ({"word1": "special", "word2": "requests"},
                                     {"word1": "pending", "word2": "deposits"},
                                     {"word1": "express", "word2": "packages"}),
                       ("c_count", "custdist"))
QUERIES["Q18"] = Query("Q18", None, ({"quantity": 300}, {"quantity": 250}, {"quantity": 200}),
                       ("c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice",
                        "sum(l_quantity)"))
# Q1 too (bench/tpch/q1.py); its sums and averages are all values
QUERIES["Q1"] = Query("Q1", None, ({"delta": 90}, {"delta": 60}, {"delta": 120}),
                      ("l_returnflag", "l_linestatus", "sum_qty", "sum_base_price",
                       "sum_disc_price", "sum_charge", "avg_qty", "avg_price", "avg_disc",
                       "count_order"))
# Q17 too (bench/tpch/q17.py); parameter sets whose parts have lines at sf 0.01
QUERIES["Q17"] = Query("Q17", None, ({"brand": "Brand#34", "container": "WRAP BAG"},
                                     {"brand": "Brand#51", "container": "JUMBO PKG"},
                                     {"brand": "Brand#42", "container": "LG DRUM"}),
                       ("avg_yearly",))
# Q11 too (bench/tpch/q11.py); fraction 0.0001 / sf at sf 1 (TPC-H), more at sf 0.01
QUERIES["Q11"] = Query("Q11", None, ({"nation": "GERMANY", "fraction": 0.0001},
                                     {"nation": "JAPAN", "fraction": 0.0002},
                                     {"nation": "PERU", "fraction": 0.001}),
                       ("ps_partkey", "value"))
# Q16 too (bench/tpch/q16.py)
QUERIES["Q16"] = Query("Q16", None, ({"brand": "Brand#45", "type_": "MEDIUM POLISHED",
                                      "sizes": (49, 14, 23, 45, 19, 3, 36, 9)},
                                     {"brand": "Brand#12", "type_": "LARGE BRUSHED",
                                      "sizes": (1, 5, 10, 15, 20, 25, 30, 35)},
                                     {"brand": "Brand#33", "type_": "SMALL PLATED",
                                      "sizes": (50, 2, 7, 44, 18, 33, 27, 11)}),
                       ("p_brand", "p_type", "p_size", "supplier_cnt"))
# Q22 too (bench/tpch/q22.py)
QUERIES["Q22"] = Query("Q22", None, ({"codes": ("13", "31", "23", "29", "30", "18", "17")},
                                     {"codes": ("10", "11", "20", "21", "33", "34", "12")},
                                     {"codes": ("15", "16", "19", "22", "25", "27", "32")}),
                       ("cntrycode", "numcust", "totacctbal"))
# Q21 too (bench/tpch/q21.py)
QUERIES["Q21"] = Query("Q21", None, ({"nation": "SAUDI ARABIA"}, {"nation": "JAPAN"},
                                     {"nation": "KENYA"}), ("s_name", "numwait"))
VALUE = {"Q21": "numwait", "Q22": "totacctbal", "Q16": "supplier_cnt", "Q11": "value", "Q17": "avg_yearly", "Q1": ("sum_qty", "sum_base_price", "sum_disc_price", "sum_charge", "avg_qty",
                "avg_price", "avg_disc"), "Q13": "custdist", "Q18": "sum(l_quantity)", "Q10": "revenue", "Q14": "promo_revenue", "Q4": "order_count", "Q5": "revenue", "Q9": "sum_profit", "Q3": "revenue", "Q6": "revenue",
         "Q7": "revenue", "Q12": "high_line_count", "Q19": "revenue"}


def rows_of(result: dict, query: Query) -> list[tuple]:
    """A result's rows as tuples in the query's column order (dates as ISO text)."""
    cols = [[_plain(c, v) for v in result[c]] if c.endswith("date") or
            not isinstance(result[c], np.ndarray) else result[c].tolist()    # (as .item())
            for c in query.columns]
    return list(zip(*cols))


def _plain(col, v):
    if col.endswith("date") and not isinstance(v, str):
        return str(np.datetime64(int(v), "D")) if isinstance(v, (int, np.integer)) \
            else str(v)
    return v.item() if hasattr(v, "item") else v


def same(got: list[tuple], want: list[tuple], query: Query, rtol: float = 1e-9) -> bool:
    """Row lists equal, the value column (Q1: columns) up to float summation order."""
    if len(got) != len(want):
        return False
    value = VALUE[query.name]
    vis = {query.columns.index(v) for v in ((value,) if isinstance(value, str) else value)}
    for g, w in zip(got, want):
        if any(a != b for i, (a, b) in enumerate(zip(g, w)) if i not in vis):
            return False
        if not all(np.isclose(float(g[i]), float(w[i]), rtol=rtol, atol=1e-6) for i in vis):
            return False
    return True
# Q8, Q2, Q20 and Q15 (bench/tpch/q8.py, q2.py), on the shared tables only
SQL["Q8"] = """
SELECT o_year, sum(CASE WHEN nation = '{nation}' THEN volume ELSE 0 END) / sum(volume)
       AS mkt_share FROM (
  SELECT {year} AS o_year, l_extendedprice * (1 - l_discount) AS volume, n2.n_name AS nation
  FROM part, supplier, lineitem, orders, customer, nation n1, nation n2, region
  WHERE p_partkey = l_partkey AND s_suppkey = l_suppkey AND l_orderkey = o_orderkey
    AND o_custkey = c_custkey AND c_nationkey = n1.n_nationkey
    AND n1.n_regionkey = r_regionkey AND r_name = '{region}'
    AND s_nationkey = n2.n_nationkey
    AND o_orderdate BETWEEN {D}'1995-01-01' AND {D}'1996-12-31'
    AND p_type = '{type}') AS all_nations
GROUP BY o_year ORDER BY o_year"""
QUERIES["Q8"] = Query("Q8", None, ({"nation": "BRAZIL", "region": "AMERICA",
                                    "type": "ECONOMY ANODIZED STEEL"},
                                   {"nation": "GERMANY", "region": "EUROPE",
                                    "type": "LARGE BRUSHED BRASS"},
                                   {"nation": "CHINA", "region": "ASIA",
                                    "type": "PROMO POLISHED TIN"}), ("o_year", "mkt_share"))
VALUE["Q8"] = "mkt_share"
SQL["Q2"] = """
SELECT s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
FROM part, supplier, partsupp, nation, region
WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND p_size = {size}
  AND p_type LIKE '%{type}' AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey
  AND r_name = '{region}'
  AND ps_supplycost = (SELECT min(ps_supplycost) FROM partsupp, supplier, nation, region
                       WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey
                         AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey
                         AND r_name = '{region}')
ORDER BY s_acctbal DESC, n_name, s_name, p_partkey LIMIT 100"""
QUERIES["Q2"] = Query("Q2", None, ({"size": 15, "type": "BRASS", "region": "EUROPE"},
                                   {"size": 10, "type": "STEEL", "region": "ASIA"},
                                   {"size": 40, "type": "TIN", "region": "AMERICA"}),
                      ("s_acctbal", "s_name", "n_name", "p_partkey", "p_mfgr", "s_address",
                       "s_phone", "s_comment"))
VALUE["Q2"] = "s_acctbal"
SQL["Q20"] = """
SELECT s_name, s_address FROM supplier, nation
WHERE s_suppkey IN (
    SELECT ps_suppkey FROM partsupp
    WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE '{color}%')
      AND ps_availqty > (SELECT 0.5 * sum(l_quantity) FROM lineitem
                         WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey
                           AND l_shipdate >= {D}'{date}'
                           AND l_shipdate < {D}'{date}' + INTERVAL 1 YEAR))
  AND s_nationkey = n_nationkey AND n_name = '{nation}'
ORDER BY s_name"""
QUERIES["Q20"] = Query("Q20", None, ({"color": "forest", "date": "1994-01-01",
                                      "nation": "CANADA"},
                                     {"color": "green", "date": "1995-01-01",
                                      "nation": "GERMANY"},
                                     {"color": "ivory", "date": "1997-01-01",
                                      "nation": "JAPAN"}), ("s_name", "s_address"))
VALUE["Q20"] = ()
SQL["Q15"] = """
WITH revenue0 AS (
  SELECT l_suppkey AS supplier_no, sum(l_extendedprice * (1 - l_discount)) AS total_revenue
  FROM lineitem
  WHERE l_shipdate >= {D}'{date}' AND l_shipdate < {D}'{date}' + INTERVAL 3 MONTH
  GROUP BY l_suppkey)
SELECT s_suppkey, s_name, s_address, s_phone, total_revenue FROM supplier, revenue0
WHERE s_suppkey = supplier_no AND total_revenue = (SELECT max(total_revenue) FROM revenue0)
ORDER BY s_suppkey"""
QUERIES["Q15"] = Query("Q15", None, ({"date": "1996-01-01"}, {"date": "1993-04-01"},
                                     {"date": "1997-07-01"}),
                       ("s_suppkey", "s_name", "s_address", "s_phone", "total_revenue"))
VALUE["Q15"] = "total_revenue"
