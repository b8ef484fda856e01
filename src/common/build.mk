# The build every C component shares (src/kernel, src/mockups, src/inject, src/tune): included by
# each Makefile, which sets before the include
#   DEFAULT_BUILD  its build directory when make gets no BUILD, relative to its own directory
#   SOURCES        its C files relative to its own directory; those of src/common as ../common/*.c
#   OWN_CFLAGS     the compiler flags of its own (-fPIC, include directories)
#   CFLAGS ?= ...  the flags a user may replace (optimisation, debugging, sanitizers)
# and after it its product and the rule that links it. Objects sit below BUILD_DIR, mirroring the
# source folders; those of src/common under BUILD_DIR/common.
MPICC ?= mpicc
# Recipes run the compiler as the shell variable "$$MPICC", never as make's $(MPICC): the workflow
# passes the config's mpicc in the environment, and make would expand `$(...)` in it again and
# hand `;` or backticks to the recipe's shell (docs/bad_inputs.md).
export MPICC

# A relative BUILD is taken relative to the directory make was started from (the shell's PWD),
# like any other path on a command line.
ifeq ($(origin BUILD),undefined)
BUILD_DIR := $(abspath $(CURDIR)/$(DEFAULT_BUILD))
else ifeq ($(filter /%,$(BUILD)),)
BUILD_DIR := $(abspath $(or $(PWD),$(CURDIR))/$(BUILD))
else
BUILD_DIR := $(abspath $(BUILD))
endif

COMMON_DIR := ../common
BUILD_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -I$(COMMON_DIR) \
                $(OWN_CFLAGS)
OBJECTS := $(patsubst %.c,$(BUILD_DIR)/%.o,$(SOURCES:$(COMMON_DIR)/%=common/%))

.PHONY: all clean FORCE
all:

$(BUILD_DIR)/common/%.o: $(COMMON_DIR)/%.c
	@mkdir -p '$(@D)'
	$$MPICC $(BUILD_CFLAGS) $(CFLAGS) -MMD -MP -c -o '$@' '$<'

$(BUILD_DIR)/%.o: %.c
	@mkdir -p '$(@D)'
	$$MPICC $(BUILD_CFLAGS) $(CFLAGS) -MMD -MP -c -o '$@' '$<'

# Linked under a temporary name and renamed: a half-written library never sits at the final path.
$(BUILD_DIR)/%.so:
	$$MPICC $(BUILD_CFLAGS) $(CFLAGS) -shared -o '$@.tmp' $^ $(LDLIBS)
	mv -f '$@.tmp' '$@'

$(BUILD_DIR):
	mkdir -p '$@'

# The compiler the objects were built with, rewritten only when MPICC changes: the same BUILD
# with another MPI library's mpicc rebuilds every object instead of linking two libraries' objects.
# The Makefiles hold the flags: a change to them rebuilds every object too.
COMPILER := $(BUILD_DIR)/compiler
$(OBJECTS): $(COMPILER) $(MAKEFILE_LIST)
$(COMPILER): FORCE | $(BUILD_DIR)
	@printf '%s\n' "$$MPICC" | cmp -s - '$@' || printf '%s\n' "$$MPICC" > '$@'

# The collective mock-ups (src/mockups), for a component that sets LINKS_MOCKUPS: one archive per
# BUILD, whose own Makefile decides whether it is out of date (sources, MPICC).
ifdef LINKS_MOCKUPS
MOCKUPS := $(BUILD_DIR)/mockups/libmpiguide-mockups.a
BUILD_CFLAGS += -I../mockups
$(MOCKUPS): FORCE
	$(MAKE) -C ../mockups BUILD='$(BUILD_DIR)/mockups'
clean: clean-mockups
.PHONY: clean-mockups
clean-mockups:
	$(MAKE) -C ../mockups BUILD='$(BUILD_DIR)/mockups' clean
endif

clean:
	rm -f $(OBJECTS) $(OBJECTS:.o=.d) $(PRODUCT) $(COMPILER)

-include $(OBJECTS:.o=.d)
