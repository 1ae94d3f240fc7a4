"""C: the only layer that writes C text.

    prototype   the kernel's prototype, described once for source, header and cdef
    statements  Imp statements and expressions as C (FunctionBody)
    parallel    loops split across threads (OpenMP), their bodies outlined
    export_names which names an exported kernel may have (check_export_name)
    render      the file around the function (jinja2 templates) and its frame

Importers use `etchpy.c.render` (render, checks_source, prototype, CSource).
"""
