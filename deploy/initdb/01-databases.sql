-- Run once by the postgres image on an empty volume: the Dagster storage database beside `kb`.
CREATE DATABASE dagster OWNER kb;
