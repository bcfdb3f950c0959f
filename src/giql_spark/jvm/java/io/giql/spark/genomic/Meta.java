package io.giql.spark.genomic;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A VCF header's structured line, {@code ##KEY=<ID=x,Number=1,Type=Integer,Description="...">},
 * as its key and ordered fields. Read leniently, as htslib reads it: spaces around the separators,
 * quoted values with escaped quotes and commas, a missing closing '>'.
 */
final class Meta {
  final String key;
  final Map<String, String> fields = new LinkedHashMap<>();

  private Meta(String key) {
    this.key = key;
  }

  /** The structured line {@code text} (after "##"), or null when its value is not {@code <...>}. */
  static Meta parse(String text, int lineNumber) {
    int eq = text.indexOf('=');
    if (eq <= 0) return null;
    String value = text.substring(eq + 1).trim();
    if (!value.startsWith("<")) return null;
    Meta m = new Meta(text.substring(0, eq).trim());
    int i = 1;
    int n = value.endsWith(">") ? value.length() - 1 : value.length();
    while (i < n) {
      while (i < n && (value.charAt(i) == ' ' || value.charAt(i) == ',')) i++;
      int k0 = i;
      while (i < n && value.charAt(i) != '=' && value.charAt(i) != ',') i++;
      String k = value.substring(k0, i).trim();
      if (k.isEmpty()) break;
      if (i >= n || value.charAt(i) == ',') {
        m.fields.put(k, "");
        continue;
      }
      i++;  // '='
      while (i < n && value.charAt(i) == ' ') i++;
      StringBuilder v = new StringBuilder();
      if (i < n && value.charAt(i) == '"') {
        i++;
        while (i < n && value.charAt(i) != '"') {
          if (value.charAt(i) == '\\' && i + 1 < n) i++;
          v.append(value.charAt(i++));
        }
        if (i >= n) throw new Bad("unterminated quoted value in " + m.key + " line", lineNumber);
        i++;  // closing quote
      } else {
        while (i < n && value.charAt(i) != ',') v.append(value.charAt(i++));
      }
      m.fields.putIfAbsent(k, v.toString().trim());
    }
    return m;
  }

  String get(String field) {
    return fields.get(field);
  }
}
