# SPDX-License-Identifier: GPL-2.0-only
# memory.py PID WHEN: one line on a process's resident memory, for
# bench/memory.sh and bench/cycle.sh: RSS (anonymous, file-backed),
# threads, the main heap, glibc's thread arenas (their heaps are 64
# MiB-aligned anonymous mappings) and the largest other anonymous
# mappings (resident/size in MiB), so growth shows where it is held.
import re
import sys

pid, when = sys.argv[1], sys.argv[2]
st = {}
for line in open("/proc/%s/status" % pid):
    if ":" in line and len(line.split()) > 1:
        st[line.split(":")[0]] = line.split()[1]
maps, cur = [], None
for line in open("/proc/%s/smaps" % pid):
    m = re.match(r"([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)", line)
    if m:
        cur = [int(m.group(1), 16), int(m.group(2), 16), m.group(3).strip(), 0]
        maps.append(cur)
    elif line.startswith("Rss:") and cur is not None:
        cur[3] = int(line.split()[1])
arenas = [m for m in maps if m[2] == "" and m[0] % (64 << 20) == 0]
heap = sum(m[3] for m in maps if m[2] == "[heap]")
other = sorted((m for m in maps if m[2] == "" and m not in arenas), key=lambda m: -m[3])
print("%s rss %.1f MiB (anon %.1f, file %.1f), %s threads; main heap %.1f MiB,"
      " %d thread arenas holding %.1f MiB; largest other anon %s"
      % (when, int(st["VmRSS"]) / 1024, int(st["RssAnon"]) / 1024,
         int(st["RssFile"]) / 1024, st["Threads"], heap / 1024, len(arenas),
         sum(m[3] for m in arenas) / 1024,
         ", ".join("%.1f/%.0f" % (m[3] / 1024, (m[1] - m[0]) / 1048576) for m in other[:3])))
