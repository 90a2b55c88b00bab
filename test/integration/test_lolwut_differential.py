"""Differential test of LOLWUT (issue 28): goblin-core against redis-server
7.0 (Debian's 7.0.15), both started here.

What is compared, and what is normalised (docs/testing.md lists it):
  * the last line names the server and its version: Redis prints "Redis
    ver. 7.0.15", Goblin "Goblin Core ver. <its version>". That line alone
    is normalised, in RESP2 and RESP3 (a verbatim "txt" string there).
  * everything Redis draws without rand() is compared byte for byte: the
    default and every version other than 5 and 6 (the version line only),
    VERSION 5 with one or two rows of squares (Schotter's first two rows are
    not turned or moved), every error.
  * what Redis draws with rand() (Schotter's lower rows, every VERSION 6
    skyline) changes from one run to the next on Redis itself: compared
    by its shape (the lines, their lengths in characters, the characters
    used), which the arguments alone decide.
"""

import re

import gbtest
from gbtest import Raw

VERSION_LINE = re.compile(rb"(Redis|Goblin Core) ver\. [0-9A-Za-z.\-]+\n$")


def art(reply):
    """The text of a LOLWUT reply with the version line normalised."""
    if isinstance(reply, gbtest.Err):
        return reply
    text = bytes(reply)
    assert VERSION_LINE.search(text), text[-80:]
    return VERSION_LINE.sub(b"<server> ver. <version>\n", text)


GRAY_CELL = re.compile(rb"\x1b\[0;(30;40|90;100|37;47|97;107)m \x1b\[0m")


def picture_cells(text, version):
    """The picture's lines (the text lines after it left out), each as its
    number of cells, after checking that every cell is one Redis draws: a
    braille character (version 5) or a space in one of four grays (6)."""
    lines = text.split(b"\n")[:-3 if version == 6 else -2]
    counts = []
    for line in lines:
        if version == 5:
            chars = line.decode("utf-8")
            assert all(0x2800 <= ord(ch) <= 0x28FF for ch in chars), line
            counts.append(len(chars))
        else:
            assert GRAY_CELL.sub(b"", line) == b"", line
            counts.append(len(GRAY_CELL.findall(line)))
    return counts


class LolwutDifferentialTest(gbtest.GoblinAndRedisCase):
    def connections(self, resp3=False):
        conns = (Raw(self.goblin), Raw(self.redis))
        for c in conns:
            self.addCleanup(c.close)
            if resp3:
                c.call("HELLO", "3")
        return conns

    def compare(self, conns, argv):
        a, b = conns[0].call(*argv), conns[1].call(*argv)
        self.assertEqual(type(a), type(b), argv)
        self.assertEqual(art(a), art(b), argv)
        return a

    def test_deterministic_art_and_errors(self):
        for resp3 in (False, True):
            conns = self.connections(resp3)
            for argv in ([b"LOLWUT"], [b"lolwut", b"1", b"2"], [b"LOLWUT", b"VERSION"], [b"LOLWUT", b"VERSION", b"7"],
                         [b"LOLWUT", b"VERSION", b"-1"], [b"LOLWUT", b"VERSION", b"4"], [b"LOLWUT", b"VERSION", b"59"],
                         [b"LOLWUT", b"VERSION", b"x"], [b"LOLWUT", b"VERSION", b"5", b"x"],
                         [b"LOLWUT", b"VERSION", b"5", b"10", b"y"], [b"LOLWUT", b"VERSION", b"6", b"1", b"z"],
                         [b"LOLWUT", b"VERSION", b"5", b"66", b"8", b"2"], [b"LOLWUT", b"VERSION", b"5", b"10", b"3", b"1"],
                         [b"LOLWUT", b"VERSION", b"5", b"1", b"1", b"1"], [b"LOLWUT", b"version", b"5", b"2", b"200", b"2"],
                         [b"LOLWUT", b"VERSION", b"5", b"-5", b"-5", b"-5"], [b"LOLWUT", b"VERSION", b"5", b"1000", b"1", b"2"],
                         [b"LOLWUT", b"VERSION", b"5", b"333", b"7", b"2"], [b"LOLWUT", b"VERSION", b"4294967301", b"9", b"3", b"2"],
                         [b"LOLWUT", b"VERSION", b"6", b"1", b"1"], [b"LOLWUT", b"VERSION", b"5", b"5000", b"300", b"0"]):
                self.compare(conns, argv)

    def test_random_art_has_redis_shape(self):
        conns = self.connections()
        for version, argv in ((5, [b"LOLWUT", b"VERSION", b"5"]), (5, [b"LOLWUT", b"VERSION", b"5", b"40", b"5", b"9"]),
                              (6, [b"LOLWUT", b"VERSION", b"6"]), (6, [b"LOLWUT", b"VERSION", b"6", b"200", b"50"]),
                              (6, [b"LOLWUT", b"VERSION", b"6", b"3", b"7"])):
            a, b = (art(c.call(*argv)) for c in conns)
            self.assertEqual(picture_cells(a, version), picture_cells(b, version), argv)
            self.assertEqual(a.split(b"\n")[-3:], b.split(b"\n")[-3:], argv)


if __name__ == "__main__":
    gbtest.run_tests()
