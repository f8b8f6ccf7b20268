[ ''first line
  second'' ''  leading spaces kept'' ''no newline'' '''' ]
