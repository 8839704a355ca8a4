"""What the end-to-end check scripts share: one line per check, and a summary."""
FAILURES = []
COUNT = [0]


def check(name, condition, detail=""):
    COUNT[0] += 1
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else f" {detail}"), flush=True)
    if not condition:
        FAILURES.append(name)


def summary(what):
    """Prints `passed/total what checks passed` and returns the exit code."""
    print(f"{COUNT[0] - len(FAILURES)}/{COUNT[0]} {what} checks passed")
    return 1 if FAILURES else 0


def chromium(*arguments):
    """Headless Debian Chromium under selenium, keeping the browser's console log."""
    from selenium import webdriver
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", *arguments):
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=webdriver.ChromeService(executable_path="/usr/bin/chromedriver"), options=options)
